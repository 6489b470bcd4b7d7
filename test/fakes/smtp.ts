import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

/** An SMTP reply refusing a recipient at RCPT TO (452: for now; 550: for good). */
export interface SmtpRefusal {
  readonly code: number;
  readonly text: string;
}

export interface FakeSmtp {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * A real `smtp-server` on loopback, no TLS nor login: it pushes the envelope recipients of each mail it takes
 * onto `received`, refuses a recipient at RCPT TO when `refuse` answers a refusal for its address, and the
 * sender at MAIL FROM when `refuseSender` does for its. A mail taken is answered (its final 250) once what
 * `hold` returns for its recipients has settled.
 */
export async function startFakeSmtp(options: {
  readonly received: string[][];
  readonly refuse?: (address: string) => SmtpRefusal | undefined;
  readonly refuseSender?: (address: string) => SmtpRefusal | undefined;
  readonly hold?: (recipients: readonly string[]) => Promise<void> | undefined;
}): Promise<FakeSmtp> {
  const { received, refuse, refuseSender, hold } = options;
  const answer = (refusal: SmtpRefusal | undefined, callback: (err?: Error) => void) => {
    if (refusal === undefined) callback();
    else callback(Object.assign(new Error(refusal.text), { responseCode: refusal.code }));
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    onMailFrom(address, _session, callback) {
      answer(refuseSender?.(address.address), callback);
    },
    onRcptTo(address, _session, callback) {
      answer(refuse?.(address.address), callback);
    },
    onData(stream, session, callback) {
      stream.resume();
      stream.on("end", () => {
        const recipients = session.envelope.rcptTo.map((r) => r.address);
        received.push(recipients);
        const held = hold?.(recipients);
        if (held === undefined) callback();
        else void held.then(() => callback());
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** `platforms.email` sending through the fake on `port` (plain SMTP, from svc@example.org) to `homeChannel`. */
export const emailPlatform = (port: number, homeChannel: string) => ({
  enabled: true,
  host: "127.0.0.1",
  port,
  secure: false,
  from: "svc@example.org",
  home_channel: homeChannel,
});
