// `BENCH_ONLY=a,b npm run bench`: refreshes those benches' sections of BENCHMARKS.md and keeps the
// others as the last full run wrote them (each says when it was run), with their lines in the
// page's list of targets not met.

/**
 * The `## name` sections of `page` (up to the next `## ` heading or the peers' marker), each with
 * its run date: its own `Run:` line, else the page's (a page from a full run dates its sections
 * once, at the top).
 */
export function benchSections(page) {
  const out = new Map();
  const body = page.split("<!-- peers:begin")[0];
  const pageRun = /^Run: (\S+)/m.exec(body.split(/^## /m)[0])?.[1] ?? "unknown";
  const parts = body.split(/^(?=## )/m).slice(1);
  for (const p of parts) {
    const eol = p.indexOf("\n");
    const dated = /^Run: /m.test(p) ? p : `${p.slice(0, eol)}\n\nRun: ${pageRun}\n${p.slice(eol)}`;
    out.set(p.slice(3, eol).trim(), `${dated.trimEnd()}\n`);
  }
  return out;
}

/** The `- name: …` lines of `page`'s target lists for the benches in `names`. */
export function targetLines(page, names) {
  const head = page.split(/^## /m)[0];
  const keep = { missed: [], blocked: [] };
  let list = null;
  for (const line of head.split("\n")) {
    if (line.startsWith("Targets not met in this run")) list = keep.missed;
    else if (line.startsWith("Targets not met that this machine")) list = keep.blocked;
    else if (list && line.startsWith("- ")) {
      const name = line.slice(2, line.indexOf(":"));
      if (names.includes(name)) list.push(line.slice(2));
    }
  }
  return keep;
}
