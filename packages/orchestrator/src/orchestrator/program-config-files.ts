/**
 * Programs ux knows to read configuration (or run code) from the directory they run in and the
 * directories above it, and from the home directory. An escalated program runs outside the sandbox, so
 * any of these files that the sandbox wrote during the session would decide what it does on the host:
 * each one that lies in a writable root must predate the session (docs/zsh-fork.md, "Configuration the
 * sandbox wrote"). The git repository around the working directory is checked for every program
 * (`gitRepositorySurface`); git itself needs nothing more here.
 */
export interface ProgramConfigFiles {
  /** File names of the program (as run, or of the file a link leads to); a pattern for versioned names. */
  programs: readonly string[] | RegExp;
  /** Looked up in the working directory and each directory above it, while inside a writable root. */
  files: readonly string[];
  /** Relative to the session's home directory (checked when they lie in a writable root). */
  home?: readonly string[];
  /**
   * Options whose value names another directory to work in or a file to read instead (`make -C dir`,
   * `git -C dir`, `make -f file`): the file, and the directory (or the file's directory), are checked
   * like the working directory.
   */
  pathOptions?: readonly string[];
  why: string;
}

export const PROGRAM_CONFIG_FILES: readonly ProgramConfigFiles[] = [
  {
    programs: ['git'],
    files: [],
    home: ['.gitconfig', '.config/git/config', '.config/git/attributes'],
    pathOptions: ['-C', '--git-dir', '--work-tree'],
    why: 'git runs what its configuration names (core.fsmonitor, core.pager, aliases, filters, hooks)',
  },
  {
    programs: ['npm', 'npx'],
    files: ['.npmrc', 'package.json'],
    home: ['.npmrc'],
    pathOptions: ['--prefix', '-C'],
    why: "npm's .npmrc names the shell and Node options its scripts run with; package.json's scripts are what `npm run`, `npm test` and installs run",
  },
  {
    programs: ['pnpm', 'pnpx'],
    files: ['.npmrc', 'package.json', 'pnpm-workspace.yaml', '.pnpmfile.cjs', '.pnpmfile.mjs'],
    home: ['.npmrc'],
    pathOptions: ['-C', '--dir', '--prefix'],
    why: 'pnpm loads .pnpmfile hooks as code and takes settings and scripts from .npmrc, pnpm-workspace.yaml and package.json',
  },
  {
    programs: ['yarn', 'yarnpkg'],
    files: ['.yarnrc', '.yarnrc.yml', 'package.json', '.pnp.cjs'],
    home: ['.yarnrc', '.yarnrc.yml'],
    pathOptions: ['--cwd'],
    why: "yarn runs the release a .yarnrc.yml's yarnPath names, plugins it lists, and package.json's scripts",
  },
  {
    programs: ['bun', 'bunx'],
    files: ['bunfig.toml', 'package.json', '.env'],
    home: ['.bunfig.toml'],
    pathOptions: ['--cwd'],
    why: 'bun preloads the scripts bunfig.toml names and runs package.json scripts',
  },
  {
    programs: ['node', 'nodejs'],
    files: ['package.json', '.node-version', '.nvmrc', '.tool-versions'],
    why: 'package.json decides how Node loads a module (type, imports); version files choose the node a version manager runs',
  },
  {
    programs: ['make', 'gmake'],
    files: ['Makefile', 'makefile', 'GNUmakefile'],
    pathOptions: ['-C', '--directory', '-f', '--file', '--makefile'],
    why: "a makefile's recipes are commands make runs",
  },
  {
    programs: ['cargo', 'rustc', 'rustup', 'rustdoc'],
    files: [
      '.cargo/config.toml',
      '.cargo/config',
      'Cargo.toml',
      'build.rs',
      'rust-toolchain.toml',
      'rust-toolchain',
    ],
    home: ['.cargo/config.toml', '.cargo/config'],
    pathOptions: ['--manifest-path', '-C'],
    why: 'cargo runs the wrappers, runners and aliases .cargo/config names and build scripts Cargo.toml names; rust-toolchain picks the compiler rustup runs',
  },
  {
    programs: /^(python|pypy|pip)[0-9.]*$/,
    files: [
      'sitecustomize.py',
      'usercustomize.py',
      'pyproject.toml',
      'setup.py',
      'setup.cfg',
      '.python-version',
      '.tool-versions',
    ],
    home: ['.config/pip/pip.conf', '.pip/pip.conf', '.pydistutils.cfg'],
    why: 'python imports from its working directory (`-m`, `-c`), pip builds with what pyproject.toml or setup.py says, and .python-version chooses the interpreter a pyenv shim runs',
  },
  {
    programs: ['uv', 'uvx', 'poetry', 'pdm', 'hatch', 'tox', 'pytest'],
    files: [
      'pyproject.toml',
      'uv.toml',
      'poetry.toml',
      'pdm.toml',
      'hatch.toml',
      'tox.ini',
      'pytest.ini',
      'conftest.py',
      'setup.cfg',
      'setup.py',
      '.python-version',
    ],
    pathOptions: ['--directory', '--project', '-C', '--rootdir'],
    why: 'Python project tools run the build backends, scripts and plugins these files name (pytest imports conftest.py)',
  },
  {
    programs: ['go'],
    files: ['go.mod', 'go.work', 'go.env'],
    pathOptions: ['-C'],
    why: "go.mod's toolchain line makes go download and run another toolchain; go.work chooses the modules built",
  },
  {
    programs: ['ruby', 'bundle', 'bundler', 'rake', 'gem'],
    files: ['Gemfile', '.bundle/config', 'Rakefile', 'rakefile', '.ruby-version', '.tool-versions'],
    home: ['.gemrc', '.bundle/config'],
    pathOptions: ['--gemfile', '-C', '--directory', '-f', '--rakefile'],
    why: 'Bundler evaluates the Gemfile as Ruby; rake runs the Rakefile; .ruby-version chooses the interpreter',
  },
  {
    programs: ['gradle', 'gradlew', 'mvn', 'mvnw'],
    files: [
      'build.gradle',
      'build.gradle.kts',
      'settings.gradle',
      'settings.gradle.kts',
      'gradle.properties',
      'pom.xml',
      '.mvn/maven.config',
      '.mvn/jvm.config',
      '.mvn/extensions.xml',
    ],
    home: ['.gradle/gradle.properties', '.gradle/init.gradle', '.m2/settings.xml'],
    pathOptions: ['-p', '--project-dir', '-f', '--file'],
    why: 'Gradle and Maven build scripts and settings are code the build runs',
  },
  {
    programs: ['docker', 'docker-compose', 'podman'],
    files: ['compose.yaml', 'compose.yml', 'docker-compose.yml', 'docker-compose.yaml', '.env'],
    home: ['.docker/config.json'],
    pathOptions: ['--project-directory', '-f', '--file'],
    why: 'compose files name the containers, mounts and privileges docker starts on the host',
  },
];

/** The entries that apply to a program by its file names (as run, and where its links lead). */
export function configFilesFor(names: readonly string[]): ProgramConfigFiles[] {
  return PROGRAM_CONFIG_FILES.filter((entry) =>
    names.some((name) =>
      entry.programs instanceof RegExp ? entry.programs.test(name) : entry.programs.includes(name),
    ),
  );
}
