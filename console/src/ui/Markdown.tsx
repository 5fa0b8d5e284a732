/**
 * The little Markdown the service's documents use (the agreement): headings, paragraphs and
 * bullet lists, as React text (nothing is parsed as HTML).
 */
export function Markdown({ text, headingLevel = 3 }: { text: string; headingLevel?: 3 | 4 }) {
  const blocks = text.replace(/\r\n/g, '\n').split(/\n\s*\n/);
  return (
    <>
      {blocks.map((block, i) => {
        const trimmed = block.trim();
        if (!trimmed) return null;
        const heading = /^(#{1,6})\s+(.*)$/.exec(trimmed);
        if (heading && !trimmed.includes('\n')) {
          const Tag = heading[1].length <= 2 ? (`h${headingLevel}` as const) : (`h${Math.min(6, headingLevel + 1)}` as 'h4');
          return <Tag key={i}>{heading[2]}</Tag>;
        }
        const lines = trimmed.split('\n');
        if (lines.every((l) => /^\s*[-*]\s+/.test(l))) {
          return (
            <ul key={i}>
              {lines.map((l, j) => (
                <li key={j}>{l.replace(/^\s*[-*]\s+/, '')}</li>
              ))}
            </ul>
          );
        }
        return <p key={i}>{lines.join(' ')}</p>;
      })}
    </>
  );
}
