import { describe, expect, it } from 'vitest';
import type { FeatureAssignment, FeatureLayer } from './feature-assignment.js';
import {
  collapseFeatureMode,
  explainFeatureMode,
  type ModeFlagKey,
  type ModeFlags,
  type ModeProvenance,
} from './feature-mode.js';
import type { FeatureStage } from './feature-registry.js';
import { planTools } from './tool-plan.js';

// shell_tool, unified_exec, shell_zsh_fork, unified_exec_zsh_fork → mode, model tools. Written out by
// hand, apart from the collapse, so the collapse is checked against something it did not produce.
const TRUTH_TABLE = [
  [0, 0, 0, 0, 'disabled', []],
  [0, 0, 0, 1, 'disabled', []],
  [0, 0, 1, 0, 'disabled', []],
  [0, 0, 1, 1, 'disabled', []],
  [0, 1, 0, 0, 'disabled', []],
  [0, 1, 0, 1, 'disabled', []],
  [0, 1, 1, 0, 'disabled', []],
  [0, 1, 1, 1, 'disabled', []],
  [1, 0, 0, 0, 'disabled', ['shell_command']],
  [1, 0, 0, 1, 'disabled', ['shell_command']],
  [1, 0, 1, 0, 'disabled', ['shell_command']],
  [1, 0, 1, 1, 'disabled', ['shell_command']],
  [1, 1, 0, 0, 'direct', ['exec_command', 'write_stdin']],
  [1, 1, 0, 1, 'direct', ['exec_command', 'write_stdin']],
  [1, 1, 1, 0, 'disabled', ['shell_command']],
  [1, 1, 1, 1, 'zsh-fork', ['exec_command', 'write_stdin']],
] as const;

const MODE_FLAGS: ModeFlagKey[] = ['shell_tool', 'unified_exec', 'shell_zsh_fork', 'unified_exec_zsh_fork'];
const REQUIREMENTS = '/etc/ux/requirements.toml';
const CONFIG = '/home/dev/.ux/config.toml';

const flagsOf = (row: readonly unknown[]): ModeFlags => ({
  shell_tool: row[0] === 1,
  unified_exec: row[1] === 1,
  shell_zsh_fork: row[2] === 1,
  unified_exec_zsh_fork: row[3] === 1,
});

/** Where a value came from, for each layer, and the words the explanation must use for it. */
function assignment(
  key: ModeFlagKey,
  enabled: boolean,
  layer: FeatureLayer,
  line: number,
): FeatureAssignment {
  switch (layer) {
    case 'default':
      return { key, enabled, layer };
    case 'cli':
      return { key, enabled, layer, flag: `--${enabled ? 'enable' : 'disable'} ${key}` };
    case 'managed':
      return { key, enabled, layer, location: { file: REQUIREMENTS, line, column: 1 } };
    case 'profile':
      return { key, enabled, layer, profile: 'work', location: { file: CONFIG, line, column: 1 } };
    case 'user':
      return { key, enabled, layer, location: { file: CONFIG, line, column: 1 } };
  }
}

function provenanceWords(source: FeatureAssignment, platform: NodeJS.Platform): string {
  switch (source.layer) {
    case 'default':
      return `the default on ${platform}`;
    case 'cli':
      return source.flag!;
    case 'managed':
      return `pinned by the requirements: features.${source.key} = ${source.enabled} in ${REQUIREMENTS}:${source.location!.line}:1`;
    case 'profile':
      return `profiles.work.features.${source.key} = ${source.enabled} in ${CONFIG}:${source.location!.line}:1`;
    case 'user':
      return `features.${source.key} = ${source.enabled} in ${CONFIG}:${source.location!.line}:1`;
  }
}

const LAYERS: FeatureLayer[] = ['default', 'user', 'profile', 'cli', 'managed'];
const STAGES: FeatureStage[] = ['stable', 'experimental', 'under_development', 'deprecated'];
const PLATFORMS: NodeJS.Platform[] = ['linux', 'darwin', 'win32'];

describe('feature collapse', () => {
  it.each(TRUTH_TABLE)(
    'shell_tool=%i unified_exec=%i shell_zsh_fork=%i unified_exec_zsh_fork=%i → %s, tools %j',
    (...row) => {
      const flags = flagsOf(row);
      const decision = collapseFeatureMode({ flags });
      expect(decision.mode).toBe(row[4]);
      expect(explainFeatureMode(decision)).toMatch(new RegExp(`^mode ${row[4]}: `));
      expect(planTools({ flags, platform: 'linux' }).tools).toEqual(row[5]);
    },
  );

  it('explains every combination of the flags, layers, stages and platforms with the mode the collapse returns', () => {
    let checked = 0;
    for (const row of TRUTH_TABLE) {
      const flags = flagsOf(row);
      for (const platform of PLATFORMS)
        for (const stage of STAGES)
          for (const [offset] of LAYERS.entries()) {
            // Each flag gets a different layer (rotated), so one explanation mixes requirements, files,
            // flags and defaults.
            const features: ModeProvenance[] = MODE_FLAGS.map((key, index) => ({
              key,
              stage,
              source: assignment(key, flags[key], LAYERS[(index + offset) % LAYERS.length]!, index + 2),
            }));
            const decision = collapseFeatureMode({ flags, features, platform });
            const text = explainFeatureMode(decision);

            expect(decision.mode).toBe(row[4]);
            // The explanation names one mode, and it is the collapse's.
            expect([...text.matchAll(/\bmode (disabled|direct|zsh-fork)\b/g)].map((m) => m[1])).toEqual([
              decision.mode,
            ]);
            expect(decision.reasons.filter((reason) => reason.mode !== undefined)).toHaveLength(1);
            // Every fact the collapse read is named with its value, stage and where it was set.
            for (const reason of decision.reasons) {
              const source = features.find((feature) => feature.key === reason.flag)!.source;
              const stageWords = stage === 'stable' ? '' : `${stage.replace('_', ' ')}; `;
              expect(text).toContain(
                `${reason.flag} is ${flags[reason.flag] ? 'on' : 'off'} (${stageWords}${provenanceWords(source, platform)})`,
              );
            }
            // The tool plan shows this very explanation and mode.
            const plan = planTools({ flags, features, platform });
            expect(plan.mode).toBe(decision.mode);
            expect(plan.reasons[0]).toBe(text);
            expect(plan.modeReasons).toEqual(decision.reasons);
            checked++;
          }
    }
    expect(checked).toBe(16 * PLATFORMS.length * STAGES.length * LAYERS.length);
  });

  it('reads the flags in order and stops at the one that settles the mode', () => {
    const decision = collapseFeatureMode({
      flags: { shell_tool: true, unified_exec: false, shell_zsh_fork: true, unified_exec_zsh_fork: true },
    });
    expect(decision.reasons.map((reason) => [reason.flag, reason.step, reason.mode])).toEqual([
      ['shell_tool', 'on', undefined],
      ['unified_exec', 'unified-exec-off', 'disabled'],
      ['unified_exec_zsh_fork', 'gate-cannot-enable', undefined],
    ]);
  });

  it('refuses to render reasons that do not settle the mode exactly once', () => {
    const { reasons } = collapseFeatureMode({
      flags: { shell_tool: true, unified_exec: true, shell_zsh_fork: false, unified_exec_zsh_fork: false },
    });
    expect(() => explainFeatureMode({ reasons: reasons.slice(0, -1) })).toThrow(
      '0 of these reasons name a mode; exactly one must',
    );
    expect(() =>
      explainFeatureMode({ reasons: [...reasons, { ...reasons.at(-1)!, mode: 'zsh-fork' }] }),
    ).toThrow('2 of these reasons name a mode');
  });

  it('never lets the composition gate turn anything on by itself', () => {
    const gateOnly = {
      shell_tool: true,
      unified_exec: false,
      shell_zsh_fork: false,
      unified_exec_zsh_fork: true,
    };
    const decision = collapseFeatureMode({ flags: gateOnly });
    expect(decision.mode).toBe('disabled');
    expect(explainFeatureMode(decision)).toBe(
      'mode disabled: shell_tool is on; unified_exec is off; unified_exec_zsh_fork is on (under development), but it only composes unified_exec and cannot turn it on',
    );
  });

  it('explains why shell_zsh_fork alone keeps the standalone tool, naming the requirement that pinned it', () => {
    const flags = {
      shell_tool: true,
      unified_exec: true,
      shell_zsh_fork: true,
      unified_exec_zsh_fork: false,
    };
    const decision = collapseFeatureMode({
      flags,
      platform: 'linux',
      features: [
        { key: 'shell_tool', source: { key: 'shell_tool', enabled: true, layer: 'default' } },
        { key: 'unified_exec', source: { key: 'unified_exec', enabled: true, layer: 'default' } },
        {
          key: 'shell_zsh_fork',
          source: { key: 'shell_zsh_fork', enabled: true, layer: 'cli', flag: '--enable shell_zsh_fork' },
        },
        {
          key: 'unified_exec_zsh_fork',
          source: {
            key: 'unified_exec_zsh_fork',
            enabled: false,
            layer: 'managed',
            location: { file: REQUIREMENTS, line: 3, column: 1 },
          },
        },
      ],
    });
    expect(explainFeatureMode(decision)).toBe(
      `mode disabled: shell_tool is on (the default on linux); unified_exec is on (the default on linux); shell_zsh_fork is on (under development; --enable shell_zsh_fork); unified_exec_zsh_fork is off (under development; pinned by the requirements: features.unified_exec_zsh_fork = false in ${REQUIREMENTS}:3:1), so unified_exec and shell_zsh_fork do not compose: the zsh fork keeps its standalone shell tool`,
    );
  });
});
