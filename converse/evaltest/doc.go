// Package evaltest evaluates agents offline, from go test, as httptest
// tests handlers: it checks what an agent did, not only that a
// conversation ran.
//
// # Trajectories and assertions
//
// A Trajectory is a finished conversation's tool calls (turn, tool, input,
// status, output), final answer, turns, tokens and cost. FromResult,
// FromState and FromHistory read one from the converse package's values;
// Load reads a recording (converse -record) or a session file (converse
// -session).
//
// An Assertion expects something of it. Used, NotUsed and Calls count the
// calls of a tool. Sequence compares the tools called with a list (Exact,
// InOrder, AnyOrder, Subset, Superset). Args, ArgsExact and ArgsFunc check
// a call's input (a JSON subset, equality, a predicate). Turns, Tokens and
// Cost bound what was spent. AnswerEquals, AnswerContains, AnswerMatches
// and AnswerSchema check the answer. Judge.Rubric asks a model. Check
// returns the failures as errors, and Assert reports them on a *testing.T.
// Each *Failure shows the trajectory, so a reader sees what happened:
//
//	tr := evaltest.FromResult(res)
//	evaltest.Assert(t, tr, evaltest.Sequence(evaltest.InOrder, "search", "fetch"), evaltest.AnswerMatches(`\b42\b`))
//
// Validate finds malformed assertions and unknown tools before anything
// runs.
//
// # Datasets and repeated runs
//
// A Dataset holds cases: a prompt, more scripted user messages or a goal
// for a simulated User, and expectations, from Go values or a JSON or YAML
// file (LoadDataset; converse help eval has the format). Agents are not
// deterministic, so a Runner runs each case N times and passes it when a
// share of the runs (its threshold) pass. Its Report has the pass rate of
// each case and assertion, the tokens, cost and duration, as a table
// (WriteTable, Assert), JSON (WriteJSON) and JUnit XML (WriteJUnit).
//
// # A judge and a simulated user
//
// A Judge grades a trajectory by a plain-text rubric, and a User writes
// the next user message toward a goal, each through Bedrock's structured
// output (converse.Structured). Recorded gives them a client whose calls
// are recorded the first time and replayed after, so that CI runs offline
// and deterministically; its update argument, from a -update flag,
// records them anew. A replayed request that differs from its recording
// fails, naming the field that differs.
//
// # Chaos
//
// Chaos is a tool middleware that makes a named tool fail, hang, return
// garbage or be slow in a seeded share of its calls, to test that an agent
// recovers.
package evaltest
