// Package hold tracks what a holder's connection and session state mean for
// its hold (a lock node, a lease, a leadership), with Curator's
// conventions: connection lost means Doubtful (SUSPENDED), session expired,
// connection down for the whole session timeout, node deleted or Conn
// closed means Lost.
package hold
