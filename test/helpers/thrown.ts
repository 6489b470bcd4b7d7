/** The error the call throws; fails the test if it returns. */
export function thrown(call: () => unknown): unknown {
  try {
    call();
  } catch (err) {
    return err;
  }
  throw new Error("did not throw");
}
