import packageJson from '../package.json' with { type: 'json' };

/** Reported as `environmentInfo.executorVersion`. */
export const EXEC_SERVER_VERSION: string = packageJson.version;
