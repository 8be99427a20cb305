/**
 * The keys of a JSON object's text, in order and with repeats — what
 * `JSON.parse` hides (it keeps the last of two equal keys). Only the top
 * level is read; nested objects and arrays are skipped.
 */
export function topLevelKeys(text: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      let s = '';
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === '\\') {
          s += text.slice(j, j + 2);
          j++;
        } else s += text[j];
      }
      if (depth === 1 && expectKey) {
        keys.push(JSON.parse(`"${s}"`) as string);
        expectKey = false;
      }
      i = j;
    } else if (c === '{' || c === '[') {
      depth++;
      if (depth === 1 && c === '{') expectKey = true;
    } else if (c === '}' || c === ']') depth--;
    else if (c === ',' && depth === 1) expectKey = true;
  }
  return keys;
}

/** The keys that appear more than once at the top level of a JSON object's text. */
export function repeatedKeys(text: string): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const k of topLevelKeys(text)) (seen.has(k) ? repeated : seen).add(k);
  return [...repeated];
}
