package tools

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// The meta-schemas of the two drafts jsonschema-go reads, copied unchanged
// from github.com/google/jsonschema-go@v0.4.3 (jsonschema/meta-schemas),
// which does not check schemas against them itself.
//
//go:embed metaschema/draft2020-12/schema.json metaschema/draft2020-12/meta/*.json metaschema/draft7/schema.json
var metaSchemaFiles embed.FS

var (
	metaSchema2020 = sync.OnceValues(func() (*jsonschema.Resolved, error) {
		return resolveMetaSchema("draft2020-12", "https://json-schema.org/draft/2020-12/")
	})
	metaSchema7 = sync.OnceValues(func() (*jsonschema.Resolved, error) {
		return resolveMetaSchema("draft7", "http://json-schema.org/draft-07/")
	})
)

// resolveMetaSchema resolves dir/schema.json, loading the schemas it refers
// to under the URI prefix from dir.
func resolveMetaSchema(dir, prefix string) (*jsonschema.Resolved, error) {
	load := func(name string) (*jsonschema.Schema, error) {
		data, err := metaSchemaFiles.ReadFile("metaschema/" + dir + "/" + name + ".json")
		if err != nil {
			return nil, err
		}
		s := new(jsonschema.Schema)
		if err := json.Unmarshal(data, s); err != nil {
			return nil, fmt.Errorf("meta-schema %s/%s: %w", dir, name, err)
		}
		return s, nil
	}
	root, err := load("schema")
	if err != nil {
		return nil, err
	}
	return root.Resolve(&jsonschema.ResolveOptions{
		Loader: func(uri *url.URL) (*jsonschema.Schema, error) {
			name, ok := strings.CutPrefix(uri.String(), prefix)
			if !ok {
				return nil, fmt.Errorf("no meta-schema %s", uri)
			}
			return load(name)
		},
	})
}

// checkMetaSchema validates a schema, decoded from JSON, against the
// meta-schema of the draft it declares: draft-07 if its $schema says so,
// otherwise draft 2020-12, the draft jsonschema-go assumes. A schema that
// fails would otherwise be accepted here and fail every call.
func checkMetaSchema(name string, schema any) error {
	meta := metaSchema2020
	if m, ok := schema.(map[string]any); ok {
		if v, _ := m["$schema"].(string); strings.Contains(v, "json-schema.org/draft-07/") {
			meta = metaSchema7
		}
	}
	resolved, err := meta()
	if err != nil { // the embedded files are tested: this cannot happen
		return invalid(name, "input schema: loading the meta-schema: %v", err)
	}
	if err := resolved.Validate(schema); err != nil {
		return invalid(name, "input schema is not a valid JSON Schema: %s", parseViolation(err).inSchema())
	}
	return nil
}
