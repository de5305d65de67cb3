/** Classic BPF opcodes used by seccomp filters. */
export const BPF = {
  LD_W_ABS: 0x20,
  JEQ_K: 0x15,
  JSET_K: 0x45,
  RET_K: 0x06,
  AND_K: 0x54,
} as const;

export const SECCOMP_RET_ALLOW = 0x7fff0000;
export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
export const SECCOMP_RET_ERRNO = 0x00050000;
/** Hands the call to the filter's listener (seccomp user notification), whose answer is the result. */
export const SECCOMP_RET_USER_NOTIF = 0x7fc00000;

/** Offsets in `struct seccomp_data`. */
export const DATA = {
  nr: 0,
  arch: 4,
  /** Low 32 bits of argument `i` (little-endian). */
  argLow: (i: number) => 16 + 8 * i,
} as const;

/** One instruction; jumps name labels and are resolved when the program is assembled. */
export type Instruction =
  | { op: 'ld'; offset: number }
  | { op: 'and'; k: number }
  | { op: 'jeq' | 'jset'; k: number; yes: string; no: string }
  | { op: 'ret'; k: number }
  | { op: 'label'; name: string };

/** Serialises to `struct sock_filter` records (8 bytes, little-endian): code u16, jt u8, jf u8, k u32. */
export function assemble(program: readonly Instruction[]): Uint8Array {
  const labels = new Map<string, number>();
  const real: Exclude<Instruction, { op: 'label' }>[] = [];
  for (const instruction of program) {
    if (instruction.op === 'label') {
      if (labels.has(instruction.name)) throw new Error(`duplicate label ${instruction.name}`);
      labels.set(instruction.name, real.length);
    } else real.push(instruction);
  }
  const out = Buffer.alloc(real.length * 8);
  real.forEach((instruction, index) => {
    let code: number;
    let jt = 0;
    let jf = 0;
    let k = 0;
    switch (instruction.op) {
      case 'ld':
        code = BPF.LD_W_ABS;
        k = instruction.offset;
        break;
      case 'and':
        code = BPF.AND_K;
        k = instruction.k;
        break;
      case 'ret':
        code = BPF.RET_K;
        k = instruction.k;
        break;
      default: {
        code = instruction.op === 'jeq' ? BPF.JEQ_K : BPF.JSET_K;
        k = instruction.k;
        jt = jump(labels, instruction.yes, index);
        jf = jump(labels, instruction.no, index);
      }
    }
    out.writeUInt16LE(code, index * 8);
    out.writeUInt8(jt, index * 8 + 2);
    out.writeUInt8(jf, index * 8 + 3);
    out.writeUInt32LE(k >>> 0, index * 8 + 4);
  });
  return out;
}

function jump(labels: Map<string, number>, label: string, from: number): number {
  const target = labels.get(label);
  if (target === undefined) throw new Error(`unknown label ${label}`);
  const offset = target - from - 1;
  if (offset < 0 || offset > 255) throw new Error(`jump to ${label} out of range (${offset})`);
  return offset;
}
