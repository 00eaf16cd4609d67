// Helpers shared by the client's tests.

import assert from "node:assert/strict";

/** The error a promise rejects with; fails the test when it resolves. */
export async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  assert.fail("the call succeeded");
}
