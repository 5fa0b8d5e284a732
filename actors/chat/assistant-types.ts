import type { ChatFacts } from './facts.ts';

/**
 * What an assistant is, apart from any one of them: the OpenAI assistant (assistant.ts) and the
 * built-in coach (coach.ts) both implement it, and the session actor knows only this.
 */

/** One entry of the thread the browser keeps and sends back (no transcript is stored here). */
export interface ChatTurn {
  role: 'user' | 'assistant';
  content: string;
}

/** Who the assistant speaks as: the reseller's brand. */
export interface AssistantBrand {
  /** The brand's display name, or the account name when it has none. */
  name: string;
  supportEmail: string | null;
}

export interface AssistantInput {
  brand: AssistantBrand;
  facts: ChatFacts;
  /** The thread so far; only the last HISTORY_TURNS entries are used. */
  history: ChatTurn[];
  message: string;
}

export interface Assistant {
  /** For logs: `openai` or `coach`. */
  readonly name: string;
  /** The raw answer; throws when none was produced (the message is then neither counted nor charged). */
  answer(input: AssistantInput): Promise<string>;
}
