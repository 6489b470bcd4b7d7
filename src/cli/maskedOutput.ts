import { Writable } from "node:stream";

/**
 * The terminal output a readline interface echoes typed characters to, with a switch to hide them
 * while a secret is typed (as `sudo` and `ssh` do): the prompt is written to stdout directly, the echo
 * goes through here and is dropped while `hidden` is on.
 */
export interface MaskedOutput {
  readonly stream: Writable;
  hidden: boolean;
}

export function maskedOutput(target: NodeJS.WriteStream = process.stdout): MaskedOutput {
  const output: MaskedOutput = {
    hidden: false,
    stream: new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        if (output.hidden) done();
        else target.write(chunk, () => done());
      },
    }),
  };
  return output;
}
