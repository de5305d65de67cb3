import { describe, expect, it } from 'vitest';
import {
  adviseBuildFailure,
  configureArgs,
  EXCLUDED_MODULES,
  functionGlobs,
  STATIC_MODULES,
  withStaticModules,
} from './zsh-build-config.js';

// Lines as zsh 5.9's configure writes them with --disable-dynamic.
const CONFIG_MODULES = [
  '# Edit this file to change the way modules are loaded.',
  'name=zsh/main modfile=Src/zsh.mdd link=static auto=yes load=yes functions=Functions/Misc/* Functions/Math/*',
  'name=zsh/datetime modfile=Src/Modules/datetime.mdd link=static auto=yes load=no functions=Functions/Calendar/*',
  'name=zsh/files modfile=Src/Modules/files.mdd link=static auto=yes load=no',
  'name=zsh/newuser modfile=Src/Modules/newuser.mdd link=no auto=yes load=no functions=Scripts/newuser Functions/Newuser/*',
  'name=zsh/zftp modfile=Src/Modules/zftp.mdd link=no auto=yes load=no functions=Functions/Zftp/*',
  ...STATIC_MODULES.map(
    (name) => `name=${name} modfile=Src/Modules/${name.split('/').pop()}.mdd link=no auto=yes load=no`,
  ),
  '',
].join('\n');

describe('configureArgs', () => {
  it('installs under outDir, loads no module from disk, and needs no terminal to configure', () => {
    const args = configureArgs('/home/me/.ux/zsh-fork', ['--enable-etcdir=/etc/zsh']);
    expect(args[0]).toBe('--prefix=/home/me/.ux/zsh-fork');
    expect(args).toContain('--disable-dynamic');
    expect(args).toContain('--with-tcsetpgrp');
    expect(args.at(-1)).toBe('--enable-etcdir=/etc/zsh');
  });
});

describe('withStaticModules', () => {
  it('links the listed modules in and keeps zsh/files out (its builtins would bypass exec interception)', () => {
    const edited = withStaticModules(CONFIG_MODULES);
    for (const name of STATIC_MODULES)
      expect(edited).toMatch(new RegExp(`^name=${name} \\S+ link=static `, 'm'));
    for (const name of EXCLUDED_MODULES)
      expect(edited).toMatch(new RegExp(`^name=${name} \\S+ link=no `, 'm'));
    expect(edited).toMatch(/^name=zsh\/zftp \S+ link=no /m);
    expect(edited).toMatch(/^name=zsh\/newuser \S+ link=no /m);
  });

  it('fails on a config.modules that lacks a listed module (another zsh version)', () => {
    expect(() => withStaticModules(CONFIG_MODULES.replace(/^name=zsh\/regex .*$/m, ''))).toThrow(
      'config.modules has no module zsh/regex',
    );
  });
});

describe('functionGlobs', () => {
  it('lists the function globs of linked modules only, without scripts', () => {
    expect(functionGlobs(CONFIG_MODULES)).toEqual([
      'Functions/Misc/*',
      'Functions/Math/*',
      'Functions/Calendar/*',
    ]);
  });
});

describe('adviseBuildFailure', () => {
  it('names the missing compiler and the packages to install', () => {
    const advice = adviseBuildFailure('configure', [
      'checking for gcc... no',
      'configure: error: no acceptable C compiler found in $PATH',
    ]);
    expect(advice.reason).toBe('missing_tool');
    expect(advice.problem).toContain('no working C compiler');
    expect(advice.fix).toContain('apt-get install build-essential libncurses-dev');
  });

  it('names the missing ncurses headers, from configure and from make', () => {
    const fromConfigure = adviseBuildFailure('configure', [
      'configure: error: "No terminal handling library was found on your system.',
    ]);
    expect(fromConfigure.reason).toBe('missing_headers');
    expect(fromConfigure.fix).toContain('apt-get install libncurses-dev');
    const fromMake = adviseBuildFailure('make', [
      'termcap.c:44:10: fatal error: term.h: No such file or directory',
    ]);
    expect(fromMake.reason).toBe('missing_headers');
  });

  it('says autoconf is needed when make wants to regenerate configure', () => {
    const advice = adviseBuildFailure('make', ['cd . && autoconf', '/bin/sh: 1: autoconf: not found']);
    expect(advice.reason).toBe('missing_tool');
    expect(advice.fix).toContain('apt-get install autoconf');
  });

  it('falls back to the step that failed', () => {
    expect(adviseBuildFailure('configure', ['something odd']).reason).toBe('configure_failed');
    expect(adviseBuildFailure('make', ['exec.c:1: error: expected ;']).reason).toBe('make_failed');
  });
});
