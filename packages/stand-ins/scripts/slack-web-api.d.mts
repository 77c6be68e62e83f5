/** The methods the Slack stand-in serves. */
export declare const SERVED: readonly string[];
/** The described methods, as @slack/web-api's types give them (see slack-web-api.mjs). */
export declare function describeSlackMethods(): {
  version: string;
  methods: Record<string, { args: Record<string, unknown>; answer: unknown }>;
};
/** The text of the generated module. */
export declare function slackWebApiModule(): string;
