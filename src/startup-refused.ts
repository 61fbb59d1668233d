/**
 * A start-up that cannot go on for a reason the operator can fix (a service down, a port
 * taken): main prints the message alone, one line saying what and how, and exits with
 * `exitCode` (sysexits: 69 EX_UNAVAILABLE for a service that does not answer).
 */
export class StartupRefused extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'StartupRefused';
  }
}
