import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Persists an approved prefix as an `allow` rule (`approved_execpolicy_amendment`). */
export type RuleWriter = (prefix: readonly string[]) => Promise<void>;

/**
 * A `RuleWriter` that appends `prefix_rule(pattern=[…], decision="allow")` to a rule file (Codex's
 * `rules/default.rules` layout), creating the directory and file as needed. A line already present is
 * not written twice, and writes through one appender are serialised.
 */
export function createRuleFileAppender(path: string): RuleWriter {
  let queue: Promise<void> = Promise.resolve();
  return (prefix) => {
    if (prefix.length === 0) return Promise.reject(new Error('a rule needs at least one word'));
    const line = `prefix_rule(pattern=[${prefix.map((word) => JSON.stringify(word)).join(', ')}], decision="allow")`;
    const write = queue.then(() => appendLine(path, line));
    queue = write.catch(() => undefined);
    return write;
  };
}

async function appendLine(path: string, line: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  let contents = '';
  try {
    contents = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (contents.split('\n').includes(line)) return;
  const separator = contents === '' || contents.endsWith('\n') ? '' : '\n';
  await writeFile(path, `${separator}${line}\n`, { flag: 'a' });
}
