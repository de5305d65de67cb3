import * as z from 'zod/v4';
import { specialPathNames } from './special-path-names.js';

export { type SpecialPathName, specialPathNames } from './special-path-names.js';

/** Access to a path. At equal specificity `none` beats `write`, which beats `read`. */
export const fileSystemAccessSchema = z.enum(['read', 'write', 'none']);
export type FileSystemAccess = z.output<typeof fileSystemAccessSchema>;

export const fileSystemPathSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('path'),
    path: z.string().min(1).describe('Absolute, ~-relative, or relative to the cwd.'),
  }),
  z.strictObject({
    type: z.literal('glob'),
    pattern: z
      .string()
      .min(1)
      .describe('Git-style glob (`*`, `?`, `[..]`, `**/`); relative patterns are anchored at the cwd.'),
  }),
  z.strictObject({
    type: z.literal('special'),
    value: z.enum(specialPathNames),
    subpath: z.string().min(1).optional().describe('A relative path below the special location.'),
  }),
]);
export type FileSystemPath = z.output<typeof fileSystemPathSchema>;

export const fileSystemEntrySchema = z.strictObject({
  path: fileSystemPathSchema,
  access: fileSystemAccessSchema,
});
export type FileSystemEntry = z.output<typeof fileSystemEntrySchema>;

/**
 * The split file-system policy: `unrestricted` (no file-system sandbox), `external-sandbox` (an outer
 * sandbox enforces it), or `restricted` with entries where the most specific path or glob wins.
 */
export const fileSystemPolicySchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('unrestricted') }),
  z.strictObject({ kind: z.literal('external-sandbox') }),
  z.strictObject({
    kind: z.literal('restricted'),
    entries: z.array(fileSystemEntrySchema),
    glob_scan_max_depth: z.number().int().min(1).max(64).optional(),
  }),
]);
export type FileSystemPolicy = z.output<typeof fileSystemPolicySchema>;

/**
 * Network for sandboxed commands: `restricted` (no sockets beyond local unix pairs), `enabled` (the
 * host's network), or `proxied` (no route out except the host's allow-list proxy, `networkProxy`).
 */
export const networkPolicySchema = z.enum(['restricted', 'enabled', 'proxied']);
export type NetworkPolicy = z.output<typeof networkPolicySchema>;

/**
 * Where the host's network proxy (`@ux/network-proxy`) listens, for `network: 'proxied'`. A backend
 * gives the command a way to this proxy and nothing else; it never decides hosts itself.
 */
export interface NetworkProxyEndpoint {
  /**
   * The proxy's Unix socket on the host (absolute). Linux binds it into the sandbox, and a bridge
   * inside offers it on the loopback port `PROXY_BRIDGE_PORT` of the command's own network namespace.
   */
  unixSocket: string;
  /**
   * The proxy's port on the host's 127.0.0.1, for backends that cannot bridge a socket into a private
   * network namespace (Seatbelt allows outbound connections to this port only). Absent: such a backend
   * cannot run a proxied command and fails closed.
   */
  loopbackPort?: number;
}

/** What a sandbox is asked to enforce for one command. */
export interface EffectivePolicy {
  fileSystem: FileSystemPolicy;
  network: NetworkPolicy;
  /** Required with `network: 'proxied'`; ignored otherwise. */
  networkProxy?: NetworkProxyEndpoint;
  /**
   * Unix sockets outside the sandbox a command may connect to (absolute paths), in every network
   * mode. Every other unix socket on the host (the Docker socket, an ssh-agent, a tmux server) stays
   * out of reach; a backend that cannot enforce this fails closed. Default: none.
   */
  allowUnixSockets?: readonly string[];
  /**
   * `/tmp` and `$TMPDIR` are private to the session (docs/threat-model.md): the layout grants neither
   * of the host's; the backend gives commands a directory of its own in their place (bwrap binds one
   * at `/tmp` and sets `TMPDIR=/tmp`), shared by the session's commands and read by nothing outside.
   * Default false: the host's `/tmp` and `$TMPDIR` are writable, as the entries say.
   */
  privateTmp?: boolean;
  /** ux's own files, out of every sandbox's reach wherever they lie (see `HostState`). */
  hostState?: HostState;
  /**
   * Work trees of git repositories found inside the writable roots when the session started (nested
   * repositories, vendored checkouts, submodules): each one's configuration surface is protected like
   * the workspace's own (`protectedPaths`). Absolute.
   */
  knownRepositories?: readonly string[];
}

/**
 * ux's own state, which no sandboxed command may change wherever it lies: what ux reads at its next
 * start or trusts while it runs. Neither list is a deny-read entry: neither switches escalation off.
 */
export interface HostState {
  /**
   * Read-only inside every writable root that holds them, guarded when missing: `UX_HOME` (config,
   * rules, snapshots, caches), the requirements file, ux's own programs. Absolute.
   */
  readOnly?: readonly string[];
  /** Hidden from commands (masked), wherever they lie: the runtime directories, the quarantine. Absolute. */
  hidden?: readonly string[];
}
