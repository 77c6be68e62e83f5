// Loaded with `node --import` into the Restate service process only: the Restate TypeScript SDK
// (1.17) calls Promise.withResolvers, which Node 22 has and Node 20 lacks. Nothing else changes.
if (typeof Promise.withResolvers !== "function") {
  Promise.withResolvers = function withResolvers() {
    let resolve;
    let reject;
    const promise = new this((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}
