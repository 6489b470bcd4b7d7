// $BROWSER for the conformance driver: "opens" the authorization URL the way a person who approves
// would: requests it, and follows its redirect (which carries the code) to svc's loopback callback.
const [url] = process.argv.slice(2);
const answer = await fetch(url, { redirect: "manual" });
const location = answer.headers.get("location");
if (location === null) {
  process.stderr.write(`browserStub: ${url} answered ${answer.status} without a redirect\n`);
  process.exit(1);
}
await fetch(new URL(location, url), { redirect: "manual" });
