/**
 * Whose customers a staff caller sees (its user's `data_scope`; an API token carries its
 * issuer's): `all`, or `own` (the customers it manages) and `team` (also those of `teamIds`,
 * the user's teams and, where it leads, every team below them), resolved when the request
 * is authenticated so that a change of scope or membership holds from the next request.
 */
export type StaffDataScope =
  { readonly kind: 'all' } | { readonly kind: 'own' | 'team'; readonly userId: string; readonly teamIds: readonly string[] };

/** Who is making a request, once the bearer token is verified. */
export type Caller =
  | { kind: 'user'; userId: string; sessionId: string; permissions: ReadonlySet<string>; dataScope: StaffDataScope }
  | { kind: 'api_token'; userId: string; tokenId: string; permissions: ReadonlySet<string>; dataScope: StaffDataScope }
  | { kind: 'customer'; customerId: string; sessionId: string };

export type StaffCaller = Extract<Caller, { kind: 'user' | 'api_token' }>;
export type CustomerCaller = Extract<Caller, { kind: 'customer' }>;
export type SessionCaller = Extract<Caller, { sessionId: string }>;
