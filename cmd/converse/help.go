package main

import (
	"embed"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// helpFiles are the texts of "converse help TOPIC", one file per topic:
// the one place the manifest format, the -json object, recordings and the
// exit status are described, for the binary and the package doc alike.
//
//go:embed help/*.txt
var helpFiles embed.FS

// helpTopics are the topics of "converse help", in the order listed,
// each with the line that says what it holds.
var helpTopics = []topic{
	{"manifest", "the -tools file: tools that run programs or invoke Lambda functions"},
	{"mcp", "the -mcp file: the tools of MCP servers, as Claude Desktop configures them"},
	{"json", "the object -json prints for each prompt"},
	{"recording", "-record and -replay: model calls kept in a file and answered offline"},
	{"view", "converse view: a session, recording or -json output as an HTML transcript"},
	{"session", "-session: a file or a DynamoDB item, its layout and the IAM actions it needs"},
	{"serve", "converse serve in Bedrock AgentCore Runtime: the container, what command tools can run"},
	{"eval", "converse eval: run a dataset of cases against the agent; pass rates, JUnit XML"},
	{"telemetry", "the OpenTelemetry export: the OTEL_ variables converse reads"},
	{"exit", "the exit status"},
}

// topic is a topic of "converse help": its name and what it holds.
type topic struct{ name, about string }

// topicNames are the names of helpTopics, as a list for a message.
func topicNames() string {
	names := make([]string, len(helpTopics))
	for i, t := range helpTopics {
		names[i] = t.name
	}
	return strings.Join(names, ", ")
}

// helpText returns the text of a topic.
func helpText(topic string) string {
	b, err := helpFiles.ReadFile("help/" + topic + ".txt")
	if err != nil {
		return "" // no such topic; helpTopics and the files are tested to match
	}
	return string(b)
}

// printHelp prints the topic of "converse help TOPIC", args being the
// words after "help", or the list of topics for "converse help". An
// unknown topic is a usage error.
func printHelp(w io.Writer, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(w, "usage: converse help TOPIC, where TOPIC is one of:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, t := range helpTopics {
			fmt.Fprintf(tw, "  %s\t%s\n", t.name, t.about)
		}
		return tw.Flush()
	}
	if !slices.ContainsFunc(helpTopics, func(t topic) bool { return t.name == args[0] }) {
		return usagef("help %s: no such topic; the topics are %s (a prompt of one or two words starting with \"help\" goes after --: converse -- help %s)",
			args[0], topicNames(), args[0])
	}
	_, err := io.WriteString(w, helpText(args[0]))
	return err
}
