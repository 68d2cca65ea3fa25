// Runs the page's chunker (the file named by argv[2]) under node: reads [{pieces, fast}] as
// JSON on stdin, writes each case's sentences (fed piece by piece, then flushed) as JSON.
import { readFileSync } from "node:fs";

const source = readFileSync(process.argv[2], "utf8");
const { SentenceChunker } = await import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);
const cases = JSON.parse(readFileSync(0, "utf8"));
const sentences = cases.map(({ pieces, fast }) => {
  const chunker = new SentenceChunker(fast ?? null);
  return [...pieces.flatMap((piece) => chunker.feed(piece)), ...chunker.flush()];
});
process.stdout.write(JSON.stringify(sentences));
