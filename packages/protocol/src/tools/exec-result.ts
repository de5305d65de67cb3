import * as z from 'zod/v4';
import { SANDBOX_CAPABILITIES } from '../plugins/sandbox-capabilities.js';
import {
  EXEC_RESULT_VERSION,
  execResultStatuses,
  refusalDeciders,
  sandboxDenialKinds,
} from './exec-result-words.js';

// Built on first use (`z.lazy`): a process that never validates results does not pay for it at start-up.
/**
 * The structured result of every call (`exec_command`, `write_stdin`, `shell_command`, an intercepted
 * `apply_patch`), refusals and failures included: the source of the text the model reads, which is
 * rendered from it. Agents pass one or the other to their models (Codex and Claude Code this, Gemini
 * the text), so whatever a model needs to act is here. docs/reference/result.md explains each field.
 */
export const execResultSchema = z.lazy(() =>
  z.object({
    result_version: z
      .literal(EXEC_RESULT_VERSION)
      .describe('The version of this contract (docs/reference/result.md).'),
    status: z
      .enum(execResultStatuses)
      .describe(
        'exited: the process ended (exit_code); running: it is still running (session_id); refused: nothing ran (refusal says why); failed: the call could not be carried out (error says why); interrupted: the wait was stopped, the process keeps running.',
      ),
    command: z
      .string()
      .optional()
      .describe(
        'The command exactly as the call gave it (cmd, or the patch invocation); absent for write_stdin.',
      ),
    chunk_id: z
      .string()
      .optional()
      .describe('Six lowercase hex characters identifying this piece of output.'),
    wall_time_seconds: z
      .number()
      .describe(
        'Time from the moment the call started to its answer, approvals and sandbox set-up included.',
      ),
    exit_code: z.number().int().optional().describe('Present once the process has exited.'),
    session_id: z
      .number()
      .int()
      .optional()
      .describe('Present while the process is still running: poll or write to it with write_stdin.'),
    waiting_for_input: z
      .boolean()
      .optional()
      .describe(
        'True while the running process is blocked reading its terminal or stdin (a prompt, a REPL, a password question): it will not go on until it gets input. Detected on Linux only; absent when not waiting or not known.',
      ),
    original_token_count: z.number().int().optional().describe('Tokens of output before truncation.'),
    output_bytes: z
      .number()
      .int()
      .optional()
      .describe('Bytes the process printed in this wait, all of them, shown or not.'),
    output_lines: z
      .number()
      .int()
      .optional()
      .describe('Lines the process printed in this wait, all of them.'),
    output_truncated: z
      .boolean()
      .optional()
      .describe('True when output shows only the head and tail, the middle marked as dropped.'),
    sandbox: z
      .object({
        backend: z
          .string()
          .describe(
            'The sandbox backend the command started under (bwrap, seatbelt, …); in a remote environment, exec-server: and what that server reported it applied (exec-server: linuxSeccomp).',
          ),
        enforces: z
          .array(z.enum(SANDBOX_CAPABILITIES))
          .optional()
          .describe(
            'What that backend enforces here (write_limits, protected_names, read_deny, network_off, network_by_domain, unix_socket_control, private_tmp, process_isolation, resource_limits); absent when it did not say (a remote server).',
          ),
        passed_over: z
          .array(z.object({ backend: z.string(), reason: z.string() }))
          .optional()
          .describe(
            'Backends preferred before this one that were not used, and why (it cannot run here, or it does not enforce what the policy needs).',
          ),
        file_system: z
          .enum(['enforced', 'advisory', 'none'])
          .optional()
          .describe("How strongly this run's file-system limits hold."),
        network: z
          .enum(['enforced', 'advisory', 'none'])
          .optional()
          .describe("How strongly this run's network limits hold."),
      })
      .optional()
      .describe(
        'The sandbox the command started under and what it enforces, on the answer of the call that started it; absent when it ran without a sandbox.',
      ),
    sandbox_notices: z
      .array(z.string())
      .optional()
      .describe(
        'What the sandbox did besides running the command (a protected path taken back, a rerun without the sandbox), one line each.',
      ),
    sandbox_denied: z
      .boolean()
      .optional()
      .describe(
        'True when the sandbox (or the network proxy) blocked something this command tried: see denial.',
      ),
    denial: z
      .object({
        kind: z.enum(sandboxDenialKinds),
        message: z.string().describe('What was blocked and why, in one sentence.'),
        path: z.string().optional().describe('The file or directory, when one was named.'),
        host: z.string().optional().describe('The host, for network and proxy denials.'),
        reason: z
          .string()
          .optional()
          .describe(
            'Why the proxy refused (not_in_allow_list, deny_list, outside_cap, denied_by_person, …).',
          ),
      })
      .optional()
      .describe('What the sandbox blocked, when a failure looks like its doing and the policy forbade it.'),
    refusal: z
      .object({
        decided_by: z
          .enum(refusalDeciders)
          .describe(
            'person: the person said no; client: the MCP client answered without asking anyone; reviewer: an automatic reviewer; rule: a prefix rule; policy: the approval policy or sandbox settings; nobody: nobody could be asked.',
          ),
        reason: z.string().describe('Why, in one sentence.'),
      })
      .optional()
      .describe('Present when status is refused.'),
    error: z
      .object({
        code: z.string().describe('A stable code (invalid_arguments, unknown_session, …).'),
        message: z.string(),
      })
      .optional()
      .describe('Present when status is failed.'),
    next_step: z
      .string()
      .optional()
      .describe('What to do next, when there is something to say (poll the session, ask for escalation, …).'),
    output: z
      .string()
      .describe(
        'What the text shows: within max_output_tokens (default 10000), head and tail with the middle marked.',
      ),
  }),
);
export type ExecResult = z.output<typeof execResultSchema>;
export type SandboxDenial = NonNullable<ExecResult['denial']>;
export type Refusal = NonNullable<ExecResult['refusal']>;
