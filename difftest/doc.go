// Package difftest holds the differential test of zkmem against a real
// ZooKeeper 3.8: a pgregory.net/rapid property that generates random
// multi-session operation sequences, runs every step on both side by side,
// and requires the same observable behaviour from both.
//
// A sequence opens one to three sessions on each backend, creates its own
// root (a fresh zkmem server per sequence; a fresh root path on one real
// server started for the test) and then runs steps. Both sides run with
// the same settings: zktest starts the real server with the configuration
// one zkmem.Options value implies, and every zkmem server gets those
// options. The steps: creates in every mode (persistent, ephemeral,
// sequential, container, TTL) with several ACLs (world, digest, "auth"
// expanded over the session's identities, and the "ip" scheme: the
// clients' address, a mask that covers it, masks that do not, an IPv6 id
// and a malformed one, both of which 3.8.0 refuses), deletes and sets with
// right and wrong versions, exists/get/children with and without watches,
// multi, sync, get/set ACL, addAuth (several digest identities per
// session, a wrong password and repeats among them) and session close.
// After every step it compares:
//
//   - results and errors (by ZooKeeper code), created paths and so the
//     generated sequence numbers, data byte for byte (null apart from
//     empty: the steps write both), children in the order each server
//     returns them (not sorted: zkmem reproduces the server's order), ACLs
//     in the order each returns them;
//   - Stats, normalised: zxids as offsets from the root's czxid, times
//     dropped, ephemeral owners as session indexes;
//   - the server's last zxid, as an offset from the root's czxid: both
//     servers spend one zxid on every write, failed or not, and on every
//     session close, and none on reads;
//   - the watch events every session receives after every write, and the
//     EventNotWatching a closed session's watches get.
//
// A divergence fails the property; rapid shrinks it and prints the minimal
// sequence, step by step, with both backends' outcomes. Steps draw their
// versions from an oracle session on the zkmem server, so that "right
// version" means right, and favour paths created or watched before, so that
// writes collide and watches fire. The test log (-v) ends with counts of
// the outcomes and watch events compared.
//
// What the generator avoids, and why:
//
//   - Deleting a container's child, and ephemeral children of containers: a
//     real server reaps an emptied container on its own clock (every 100ms
//     here), which no step ordering can pin down. Containers are created,
//     read, given children and deleted, but never emptied. TTL nodes get a
//     TTL of an hour, so neither side reaps them during a sequence.
//   - A sequential create of a path ending in "/." or "/..": ZooKeeper
//     checks path+"1" and accepts it, go-zookeeper rejects it before
//     sending. Every other bad path is fair game, in single ops (both
//     clients check before sending) and in multi (both servers check).
//   - Container and TTL creates inside a multi, which go-zookeeper cannot
//     carry (gozk refuses them).
//
// The test needs a real ZooKeeper: see zksim/zkserver for when it skips
// and when it fails. It runs 2,000 sequences by default (-rapid.checks or
// RAPID_CHECKS to change; -short divides by five).
package difftest
