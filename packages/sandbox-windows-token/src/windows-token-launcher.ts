// The launcher a Windows plan's argv runs (`node windows-token-launcher.js --plan … -- argv…`). This file
// is an entry point, built to dist/windows-token-launcher.js; the package index does not import it.
import { launcherMain } from './launcher-main.js';

process.exitCode = await launcherMain(process.argv.slice(2));
