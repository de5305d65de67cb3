/** Win32 access rights, ACE flags and token flags the plan uses (winnt.h values). */

export const DELETE = 0x0001_0000;
export const READ_CONTROL = 0x0002_0000;
export const WRITE_DAC = 0x0004_0000;
export const WRITE_OWNER = 0x0008_0000;
export const SYNCHRONIZE = 0x0010_0000;

export const FILE_READ_DATA = 0x0001;
export const FILE_WRITE_DATA = 0x0002;
export const FILE_APPEND_DATA = 0x0004;
export const FILE_READ_EA = 0x0008;
export const FILE_WRITE_EA = 0x0010;
export const FILE_EXECUTE = 0x0020;
export const FILE_DELETE_CHILD = 0x0040;
export const FILE_READ_ATTRIBUTES = 0x0080;
export const FILE_WRITE_ATTRIBUTES = 0x0100;

export const FILE_GENERIC_READ =
  READ_CONTROL | SYNCHRONIZE | FILE_READ_DATA | FILE_READ_ATTRIBUTES | FILE_READ_EA;
export const FILE_GENERIC_WRITE =
  READ_CONTROL | SYNCHRONIZE | FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES | FILE_WRITE_EA | FILE_APPEND_DATA;
export const FILE_GENERIC_EXECUTE = READ_CONTROL | SYNCHRONIZE | FILE_READ_ATTRIBUTES | FILE_EXECUTE;

/**
 * What a writable root grants the sandbox: read, write, execute, delete, delete children ("modify"). Not
 * WRITE_DAC or WRITE_OWNER, so the sandbox cannot rewrite the ACLs that confine it.
 */
export const SANDBOX_ALLOW_MASK =
  FILE_GENERIC_READ | FILE_GENERIC_WRITE | FILE_GENERIC_EXECUTE | DELETE | FILE_DELETE_CHILD;

/**
 * What a protected path denies: every way to change its data, attributes, ACL or owner, or delete it.
 * READ_CONTROL and SYNCHRONIZE (part of FILE_GENERIC_WRITE) are left out, since opening a file for
 * reading asks for them.
 */
export const SANDBOX_DENY_WRITE_MASK =
  FILE_WRITE_DATA |
  FILE_APPEND_DATA |
  FILE_WRITE_EA |
  FILE_WRITE_ATTRIBUTES |
  FILE_DELETE_CHILD |
  DELETE |
  WRITE_DAC |
  WRITE_OWNER;

/** What a parent of a protected path denies: being deleted or renamed, and deleting children through it. */
export const SANDBOX_DENY_MOVE_MASK = DELETE | FILE_DELETE_CHILD;

const NAMES: [number, string][] = [
  [FILE_READ_DATA, 'FILE_READ_DATA'],
  [FILE_WRITE_DATA, 'FILE_WRITE_DATA'],
  [FILE_APPEND_DATA, 'FILE_APPEND_DATA'],
  [FILE_READ_EA, 'FILE_READ_EA'],
  [FILE_WRITE_EA, 'FILE_WRITE_EA'],
  [FILE_EXECUTE, 'FILE_EXECUTE'],
  [FILE_DELETE_CHILD, 'FILE_DELETE_CHILD'],
  [FILE_READ_ATTRIBUTES, 'FILE_READ_ATTRIBUTES'],
  [FILE_WRITE_ATTRIBUTES, 'FILE_WRITE_ATTRIBUTES'],
  [DELETE, 'DELETE'],
  [READ_CONTROL, 'READ_CONTROL'],
  [WRITE_DAC, 'WRITE_DAC'],
  [WRITE_OWNER, 'WRITE_OWNER'],
  [SYNCHRONIZE, 'SYNCHRONIZE'],
];

/** The names of the rights in a mask, for plans people read. */
export function accessMaskNames(mask: number): string[] {
  return NAMES.filter(([bit]) => (mask & bit) !== 0).map(([, name]) => name);
}

export const OBJECT_INHERIT_ACE = 0x1;
export const CONTAINER_INHERIT_ACE = 0x2;
export const INHERITED_ACE = 0x10;

/** CreateRestrictedToken flags. */
export const DISABLE_MAX_PRIVILEGE = 0x1;
export const LUA_TOKEN = 0x4;
export const WRITE_RESTRICTED = 0x8;

/** Well-known SIDs. */
export const EVERYONE_SID = 'S-1-1-0';
export const LOCAL_SYSTEM_SID = 'S-1-5-18';
