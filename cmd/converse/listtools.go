package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/tooluse/bedrock/converse/trace"
	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/mcptools"
)

// listedTool is a tool as converse tools lists it, and its -json form.
type listedTool struct {
	Name        string `json:"name"`
	Origin      string `json:"origin"` // built-in, manifest, lambda:FUNCTION or mcp:SERVER
	Approval    bool   `json:"approval"`
	Description string `json:"description"`
}

// toolOrigins says where each tool of a run comes from: the built-ins, the
// manifest (a program, or the Lambda function fns made it for), or the
// MCP server that offers it.
func toolOrigins(s *settings, fns *functions, bridge *mcptools.Bridge) func(name string) string {
	var builtins []string
	if !s.noBuiltins {
		for _, t := range tools.Builtins() {
			builtins = append(builtins, t.Name())
		}
	}
	return func(name string) string {
		if bridge != nil {
			if server, ok := bridge.Server(name); ok {
				return "mcp:" + server
			}
		}
		if fn, ok := fns.made[name]; ok {
			return "lambda:" + fn
		}
		if slices.Contains(builtins, name) {
			return "built-in"
		}
		return "manifest"
	}
}

// listTools prints the tools of reg, in name order: a table, or with
// asJSON one JSON array. Descriptions come from manifests and MCP servers,
// so they are shortened to a line and made printable (see shorten).
func listTools(w io.Writer, reg *tools.Registry, origin func(string) string, asJSON bool) error {
	var list []listedTool
	for _, t := range reg.Tools() {
		list = append(list, listedTool{Name: t.Name(), Origin: origin(t.Name()), Approval: t.RequiresApproval(), Description: t.Description()})
	}
	slices.SortFunc(list, func(a, b listedTool) int { return strings.Compare(a.Name, b.Name) })
	if asJSON {
		if list == nil {
			list = []listedTool{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tFROM\tAPPROVAL\tDESCRIPTION")
	for _, t := range list {
		approval := "-"
		if t.Approval {
			approval = "asks"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", trace.Printable(t.Name), trace.Printable(t.Origin), approval, trace.Short(t.Description))
	}
	return tw.Flush()
}
