/** Who is making a request, once the bearer token is verified. */
export type Caller =
  | { kind: 'user'; userId: string; sessionId: string; permissions: ReadonlySet<string> }
  | { kind: 'api_token'; userId: string; tokenId: string; permissions: ReadonlySet<string> }
  | { kind: 'customer'; customerId: string; sessionId: string };

export type StaffCaller = Extract<Caller, { kind: 'user' | 'api_token' }>;
export type CustomerCaller = Extract<Caller, { kind: 'customer' }>;
export type SessionCaller = Extract<Caller, { sessionId: string }>;
