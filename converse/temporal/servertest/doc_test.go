// Package servertest_test holds the tests of package temporal that run a
// real Temporal server in process (go.temporal.io/server/temporaltest): a
// worker killed with SIGKILL during a tool call, fifty conversations over
// three workers, a history past 5 MB. They are apart so that the tests of
// package temporal, built with -race, do not build the server with it.
package servertest_test
