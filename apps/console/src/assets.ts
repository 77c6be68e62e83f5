// The console's only stylesheet and script, served by the console itself (no build, no CDN).

export const CSS = `
:root{--bg:#fff;--fg:#1b1f24;--muted:#5b6470;--line:#d6dae0;--accent:#0b5cad;--ok:#1a7f37;--warn:#9a6700;--bad:#c4281c;--chip:#eef1f4}
@media (prefers-color-scheme:dark){:root{--bg:#111418;--fg:#e6e9ed;--muted:#9aa4af;--line:#2e353d;--accent:#6cb6ff;--ok:#56d364;--warn:#e3b341;--bad:#ff7b72;--chip:#1c2128}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;background:var(--bg);color:var(--fg)}
a{color:var(--accent)}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:var(--bg);padding:4px 8px;z-index:2}
header{display:flex;flex-wrap:wrap;align-items:center;gap:4px 16px;padding:8px 16px;border-bottom:1px solid var(--line)}
header .brand{font-weight:700;text-decoration:none;color:var(--fg)}
nav ul{display:flex;flex-wrap:wrap;gap:2px 12px;list-style:none;margin:0;padding:0}
nav a[aria-current=page]{font-weight:700;text-decoration:none;color:var(--fg)}
header .meta{margin-left:auto;color:var(--muted);font-size:13px;display:flex;gap:8px;align-items:center;flex-wrap:wrap}
main{padding:12px 16px 40px;max-width:1200px}
h1{font-size:22px;margin:8px 0 12px}h2{font-size:17px;margin:20px 0 8px}h3{font-size:15px;margin:14px 0 6px}
.scroll{overflow-x:auto;margin:8px 0 16px}
table{border-collapse:collapse;min-width:100%}
caption{text-align:left;font-weight:600;padding:4px 0}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:13px;color:var(--muted)}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
code,pre{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}
pre{background:var(--chip);padding:8px;overflow:auto;max-height:28em;white-space:pre-wrap;word-break:break-word}
.badge{display:inline-block;padding:0 6px;border-radius:9px;background:var(--chip);font-size:12px;white-space:nowrap}
.s-done,.s-applied,.s-present,.s-apply{color:var(--ok)}
.s-pending,.s-running,.s-intended,.s-skipped,.s-skip{color:var(--muted)}
.s-failed{color:var(--warn)}
.s-dead,.s-uncertain,.s-conflict{color:var(--bad);font-weight:600}
.kv{display:inline-block;margin-right:10px}.kv b{font-weight:600;color:var(--muted)}
details summary{cursor:pointer;color:var(--muted);font-size:13px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:8px;margin:8px 0}
.card{border:1px solid var(--line);border-radius:6px;padding:8px 10px}
.card .v{font-size:22px;font-weight:700;font-variant-numeric:tabular-nums}
.card .k{color:var(--muted);font-size:13px}
.card.quiet{opacity:.75}
.alerts{list-style:none;padding:0;margin:8px 0}
.alerts li{border-left:4px solid var(--bad);padding:6px 10px;margin:4px 0;background:var(--chip)}
.flash{padding:8px 10px;border-radius:4px;background:var(--chip)}.flash.ok{border-left:4px solid var(--ok)}.flash.err{border-left:4px solid var(--bad)}
.empty{color:var(--muted)}
form.inline{display:inline}
form.filters,form.action{display:flex;flex-wrap:wrap;gap:8px 12px;align-items:end;margin:8px 0}
label{display:flex;flex-direction:column;font-size:13px;color:var(--muted);gap:2px}
label.check{flex-direction:row;align-items:center;gap:6px}
fieldset{border:1px solid var(--line);border-radius:6px;margin:8px 0;padding:8px 12px}
form.filters fieldset{flex-basis:100%}
.choices{display:flex;flex-wrap:wrap;gap:2px 14px;align-items:center;margin:2px 0}
input,select,textarea,button{font:inherit;color:inherit;background:var(--bg);border:1px solid var(--line);border-radius:4px;padding:5px 8px;min-height:34px}
button{background:var(--accent);color:#fff;border-color:var(--accent);cursor:pointer}
button.secondary{background:var(--bg);color:var(--accent)}
button.danger{background:var(--bad);border-color:var(--bad)}
.dead-run{border:1px solid var(--line);border-radius:6px;padding:8px 12px;margin:10px 0}
.chart svg{width:100%;height:auto;max-height:240px;display:block}
.chart .outputs{fill:var(--accent)}
.chart .applied{fill:var(--ok)}
.chart .axis{stroke:var(--line)}.chart text{fill:var(--muted);font-size:11px}
.legend{font-size:13px;color:var(--muted)}.legend .o{color:var(--accent)}.legend .a{color:var(--ok)}
.timeline{list-style:none;padding:0;margin:0;border-left:2px solid var(--line)}
.timeline li{padding:3px 0 3px 12px;position:relative}
.timeline .ev{font-weight:600}.timeline .by{color:var(--muted)}
.timeline li::before{content:"";position:absolute;left:-5px;top:10px;width:8px;height:8px;border-radius:50%;background:var(--accent)}
.vh{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
.ro{color:var(--warn);font-weight:600}
@media (max-width:600px){body{font-size:14px}main{padding:8px 10px 32px}header .meta{margin-left:0}th,td{padding:4px 5px}}
`;

/**
 * Live pages (`<main data-live="ms">`) fetch their own URL's main content every `ms` and swap it
 * in when it changed, unless a form field inside it has the focus (a person typing is never
 * interrupted); the focused link keeps its focus across the swap.
 */
export const JS = `(() => {
  const main = document.getElementById("main");
  const every = Number(main && main.dataset.live || 0);
  const status = document.getElementById("live-status");
  if (!main || !(every > 0)) return;
  let last = null, busy = false;
  async function tick() {
    if (busy || document.hidden) return;
    busy = true;
    try {
      const r = await fetch(location.href, { headers: { "x-idem-fragment": "1" }, credentials: "same-origin" });
      if (!r.ok) { if (status) status.textContent = "live updates paused: " + r.status; return; }
      const text = await r.text();
      if (text === last) return;
      const a = document.activeElement;
      if (a && main.contains(a) && /^(INPUT|TEXTAREA|SELECT)$/.test(a.tagName)) return;
      const href = a && main.contains(a) ? a.getAttribute("href") : null;
      main.innerHTML = text;
      last = text;
      if (href) { const again = main.querySelector('[href="' + CSS.escape(href) + '"]'); if (again) again.focus(); }
      if (status) status.textContent = "updated " + new Date().toISOString().replace(/.d{3}Z$/, "Z");
      main.dispatchEvent(new CustomEvent("idem:updated"));
    } catch (e) {
      if (status) status.textContent = "live updates paused (" + e.message + ")";
    } finally { busy = false; }
  }
  setInterval(tick, every);
})();
`;

/**
 * The console's icon, inline (an SVG: a ring, as in idempotent), served at /favicon.ico so the
 * request every browser makes is answered, and linked from every page.
 */
export const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="6" fill="none" stroke="#2f6f4f" stroke-width="3"/></svg>`;
