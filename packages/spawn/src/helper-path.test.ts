import { accessSync, constants, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defaultHelperPath } from './helper-path.js';

describe('defaultHelperPath', () => {
  it('is the helper in native/build of this package, built and executable', () => {
    const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
    const path = defaultHelperPath();
    expect(realpathSync(path)).toBe(realpathSync(join(packageDir, 'native', 'build', 'ux-spawn-helper')));
    expect(() => accessSync(path, constants.X_OK)).not.toThrow();
  });
});
