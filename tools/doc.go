// Package tools defines the tools a model can call through the Amazon Bedrock
// Converse API, and a registry to hold them. It knows nothing of Bedrock: the
// converse package turns a [Registry] into a tool configuration and runs the
// calls the model asks for.
//
// # Tools
//
// A [Tool] is a name, a description, a JSON Schema for its input (always an
// object) and a function. Tools are made only by constructors, are immutable
// and are safe for concurrent use. Every [Tool.Call] checks that the input is
// a JSON object, fills in the defaults the schema declares, and validates
// the input against the schema before the function runs. An input that
// fails comes back as an [*InputError]. Its text says which properties are
// wrong and why, so that a model can correct its next call.
//
// # Typed tools
//
// [New] infers the schema from a Go type with github.com/google/jsonschema-go,
// as encoding/json decodes the type. json tags name the properties
// (embedded structs by encoding/json's rules). omitempty or omitzero makes
// one optional, and a `jsonschema:"..."` tag describes it. A []byte is
// base64 text and a json.RawMessage any JSON (see [New]). The validated input is
// decoded into that type before the function sees it:
//
//	type weatherInput struct {
//		City  string `json:"city" jsonschema:"the city to report on"`
//		Units string `json:"units,omitempty" jsonschema:"metric or imperial"`
//	}
//	weather, err := tools.New("get_weather", "Reports the weather in a city.",
//		func(ctx context.Context, in weatherInput) (string, error) { ... })
//
// [NewRaw] takes an explicit schema instead, for tools defined at run time,
// and hands the function the validated input as JSON. The schema is checked
// against the JSON Schema meta-schema when the tool is made: draft 2020-12,
// or draft-07 if its "$schema" says so. A schema with an unknown type or a
// negative minLength is then an error at once, not a failure of every call.
//
// # Options
//
// The constructors take functions that set an [Options] struct:
//
//	tools.New("get_weather", "Reports the weather.", weather, func(o *tools.Options) {
//		o.Timeout = 5 * time.Second
//	})
//
// Timeout bounds a call. Speculative lets a streaming conversation start a
// side-effect-free tool before the model's turn is complete.
// RequireApproval makes each call wait for a decision (see package
// converse). MaxOutput sets how much of a call's output the executor sends
// to the model. Strict sends the tool to Bedrock with strict: true. Env and
// InheritEnv shape a [Command] program's environment.
//
// This is the AWS SDK's convention, an exported Options struct and
// func(*Options) arguments, which users of this package meet beside it on
// every client. One struct documents every setting in one place, and the
// converse package is configured the same way.
//
// # Registry
//
// A [Registry] holds tools by name in registration order, and is safe for
// concurrent use. There is no global registry: build one with [NewRegistry]
// or use the zero value, and pass it where it is needed. [Registry.Add]
// rejects invalid tools and duplicate names, all or nothing.
//
// # Built-ins
//
// [CurrentDatetime] reports the time in a strftime format and [Calculator]
// does arithmetic on two numbers; [Builtins] returns both. They are
// speculative.
//
// # Command tools
//
// [Command] runs an external program for each call. The program is started
// directly, never through a shell, with the arguments given at construction;
// the model's input reaches it only on standard input, as a JSON object. Its
// standard output is the result.
//
// The program does not inherit the environment, so that AWS credentials
// and other secrets of the process cannot reach it, and through its output
// the model. It gets PATH, HOME, USER, LOGNAME, LANG, LC_ALL, LC_CTYPE, TZ
// and TMPDIR from the current process, if set, and nothing else. On Windows
// it also gets SYSTEMROOT, TEMP, TMP, USERPROFILE and PATHEXT.
// Options.InheritEnv passes more variables through by name, and Options.Env
// sets variables. A variable named in either is passed whatever its name,
// AWS_* included. A non-zero exit is an [*ExitError] carrying the end of
// standard error.
//
// On Unix the program runs in its own process group. The whole group is
// killed when the call's context ends or the tool's timeout expires (30
// seconds unless Options.Timeout sets another). What the program leaves in
// its group when it exits is killed too. On Linux the program is also
// killed if the calling process dies, even by SIGKILL; the processes it
// started are not.
//
// # Images and documents
//
// A tool returns images and documents beside or instead of its JSON output
// as a [Result]:
//
//	return tools.Result{Output: v, Media: []tools.Media{{Type: "image/png", Data: png}}}, nil
//
// It may be the Out of a typed tool or the value of a [NewRaw] function.
// Package converse sends the media to the model within Bedrock's limits.
//
// A program returns images or documents with a media envelope: standard
// output that is a JSON object whose only keys are "$media" and, optionally,
// "output":
//
//	{"output": {"rows": 3},
//	 "$media": [{"type": "image/png", "name": "chart", "data": "iVBORw0KGgo..."}]}
//
// It is the [Result] of the call: output (any JSON value; absent or null for
// none) and, for each item of "$media", a [Media] of its type, name and data
// (standard base64). An object with any other key is ordinary output, so no
// JSON a program writes otherwise is taken for an envelope; an envelope that
// cannot be read is an error result. The base64 data counts against the
// 1 MiB limit of standard output: raise Options.MaxOutput for large media.
//
// # Errors
//
// A Go error from [Tool.Call] means the call failed; the caller (usually the
// converse package) reports it to the model as a failed tool result. The
// texts of the errors this package makes for a call are written for the
// model. They say what was wrong (`property "city": want string, got
// integer`, "the program was killed: the call timed out"), without Go type
// names or package prefixes. Errors of constructors and [Registry.Add] are
// for Go callers and start with "tools: ". Use [errors.Is] with
// [ErrInvalidInput] or [ErrOutputTooLarge], or [errors.As] with
// [*InputError] or [*ExitError], to tell the cases apart. Constructors and
// [Registry.Add] return errors wrapping [ErrInvalidTool] or [ErrDuplicate].
package tools
