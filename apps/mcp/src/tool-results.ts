import { describeError, isIdemError } from "@idem/schema";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ToolDefinition } from "./effect-tools.js";

/** What a tool's call gets besides its arguments. */
export interface ToolCallContext {
  /** The client's name from `initialize` (`claude-code`, `cursor`), for the actor of a change. */
  clientName: string | undefined;
}

/** One tool of a session: how it is listed and what a call does. */
export interface SessionTool {
  definition: ToolDefinition;
  call(args: Record<string, unknown>, context: ToolCallContext): Promise<CallToolResult>;
}

/**
 * A tool's answer: `value` as structured content (an object; an array or a scalar wrapped in
 * `{ result }`) and as text for the model, `text` first when given.
 */
export function toolResult(value: unknown, text?: string): CallToolResult {
  const json = JSON.stringify(value, null, 2);
  const structured =
    typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : { result: value };
  return {
    content: [{ type: "text", text: text === undefined ? json : `${text}\n${json}` }],
    structuredContent: structured,
  };
}

/**
 * A tool error the model reads and may correct (`isError: true`, MCP "tool execution errors"):
 * the message as text, and the details (a code, the issues) as structured content.
 */
export function toolError(message: string, details?: Record<string, unknown>): CallToolResult {
  return {
    isError: true,
    content: [{ type: "text", text: message }],
    ...(details !== undefined && { structuredContent: details }),
  };
}

/** A failure of core (an IdemError, a journal that cannot answer) as a tool error with its code. */
export function failureResult(e: unknown): CallToolResult {
  const code = isIdemError(e) ? e.code : "INTERNAL";
  const message = describeError(e);
  return toolError(message.startsWith(`${code}: `) ? message : `${code}: ${message}`, { code });
}

/** A tool's zod input schema as the JSON Schema `tools/list` shows. */
export function inputSchemaOf(schema: z.ZodType): ToolDefinition["inputSchema"] {
  const json = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  return { ...json, type: "object" };
}

/**
 * Parses a call's arguments with the tool's schema: the value, or a tool error naming each field
 * (`since: Invalid ISO datetime`).
 */
export function parseArguments<T>(
  schema: z.ZodType<T>,
  args: Record<string, unknown>,
): { ok: true; value: T } | { ok: false; result: CallToolResult } {
  const r = schema.safeParse(args);
  if (r.success) return { ok: true, value: r.data };
  const issues = r.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
  return {
    ok: false,
    result: toolError(
      `invalid arguments: ${issues.map((i) => `${i.path || "(arguments)"}: ${i.message}`).join("; ")}`,
      { code: "INVALID_INPUT", issues },
    ),
  };
}
