// The bodies of the executor's approval routes (docs/approvals.md, docs/openapi.json): a person's
// decision, its answer, and the runs awaiting one.
import { z } from "zod";
import { AgentNameSchema, JobIdSchema } from "./records.js";

const index = z.number().int().nonnegative();
const digest = z
  .string()
  .regex(/^[0-9a-f]{64}$/, "must be a sha256 digest in hex")
  .describe("The recorded output's content hash (sha256 of its canonical JSON).");

/** The body of `POST /v1/approvals/{jobId}/approve` and `.../reject`. */
export const ApprovalDecisionBodySchema = z
  .strictObject({
    reason: z.string().trim().min(1, "say why: it is recorded").max(2000),
    actor: z
      .string()
      .trim()
      .min(1, "name the person who decides")
      .max(200)
      .describe("The person who decides (a chat-ops bot names the human it acts for)."),
    effects: z
      .array(index)
      .min(1)
      .optional()
      .describe("Approve only these effects (indexes in the output); default all awaited."),
    digest: digest
      .optional()
      .describe("The digest the person saw; refused (409) when it is not the recorded output's."),
  })
  .describe("A person's decision on a run awaiting approval.");
/** A parsed decision body. */
export type ApprovalDecisionBody = z.infer<typeof ApprovalDecisionBodySchema>;

/** `200` of a decision: what was written. */
export const ApprovalAnswerSchema = z
  .strictObject({
    jobId: JobIdSchema,
    generation: z.number().int().positive(),
    decision: z.enum(["approved", "rejected"]),
    digest,
    effects: z.array(index),
    actor: z.string(),
    reason: z.string(),
    expiresAt: z
      .number()
      .int()
      .describe("Until when an approval may be used (ms since the epoch); a rejection: its time."),
  })
  .describe("The decision as written in the journal, bound to the output's digest.");

/** `200` of `GET /v1/approvals`: the runs awaiting a person, longest waiting first. */
export const AwaitingApprovalsSchema = z
  .strictObject({
    awaiting: z.array(
      z.strictObject({
        jobId: JobIdSchema,
        generation: z.number().int().positive(),
        agent: AgentNameSchema,
        since: z.number().int().describe("When the run began waiting (ms since the epoch)."),
        request: z.strictObject({
          digest,
          effects: z.array(index).describe("The effects awaiting, by index in the output."),
          rules: z.array(z.string()).describe("The rules that matched them."),
          expiresAt: z.number().int().describe("When the request ends unanswered (rejected)."),
        }),
      }),
    ),
  })
  .describe("The runs awaiting a person's approval.");
