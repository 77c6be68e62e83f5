import type { SingleBar } from "cli-progress";

/**
 * A progress bar on stderr in `format` (cli-progress placeholders). cli-progress is imported when
 * a bar is drawn: a batch that is small or not on a terminal never loads it.
 */
export async function progressBar(format: string): Promise<SingleBar> {
  const { default: cliProgress } = await import("cli-progress");
  return new cliProgress.SingleBar(
    { stream: process.stderr, format, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
}
