package converse

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fill sets every exported field of the struct v points to for which want is
// true to a non-zero value. It fails on a kind it cannot fill. So a field the
// SDK adds makes the test that uses it look at it.
func fill(t *testing.T, v reflect.Value, want func(name string) bool) {
	t.Helper()
	v = v.Elem()
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		if !sf.IsExported() || !want(sf.Name) {
			continue
		}
		switch f.Kind() {
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Map:
			m := reflect.MakeMap(f.Type())
			m.SetMapIndex(reflect.New(f.Type().Key()).Elem(), reflect.New(f.Type().Elem()).Elem())
			f.Set(m)
		case reflect.String:
			f.SetString("x")
		case reflect.Interface:
			if f.Type() != reflect.TypeFor[document.Interface]() {
				t.Fatalf("fill: no value for %s of type %s", sf.Name, f.Type())
			}
			f.Set(reflect.ValueOf(document.NewLazyDocument(map[string]any{"k": 1})))
		default:
			t.Fatalf("fill: no value for %s of kind %s", sf.Name, f.Kind())
		}
	}
}

func all(string) bool { return true }

func TestStreamRequestCopiesEveryField(t *testing.T) {
	in := &bedrockruntime.ConverseInput{}
	fill(t, reflect.ValueOf(in), all)
	g := &types.GuardrailConfiguration{}
	fill(t, reflect.ValueOf(g), all)
	in.GuardrailConfig = g

	out := reflect.ValueOf(streamRequest(in, types.GuardrailStreamProcessingModeAsync)).Elem()
	src := reflect.ValueOf(in).Elem()
	for i := range src.NumField() {
		sf := src.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		t.Run(sf.Name, func(t *testing.T) {
			f := out.FieldByName(sf.Name)
			require.True(t, f.IsValid(), "ConverseStreamInput has no field %s", sf.Name)
			assert.False(t, f.IsZero(), "%s is not copied", sf.Name)
		})
	}
	gs := out.FieldByName("GuardrailConfig").Elem()
	gv := reflect.ValueOf(g).Elem()
	for i := range gv.NumField() {
		if sf := gv.Type().Field(i); sf.IsExported() {
			assert.Equal(t, gv.Field(i).Interface(), gs.FieldByName(sf.Name).Interface(), "guardrail %s", sf.Name)
		}
	}
	assert.Equal(t, types.GuardrailStreamProcessingModeAsync, gs.FieldByName("StreamProcessingMode").Interface())

	// converseRequest is its inverse: the same request back, every field.
	assert.Equal(t, in, converseRequest(streamRequest(in, types.GuardrailStreamProcessingModeAsync)))
}

// TestRequestSetsEveryOption: request sends every field of the
// Options.Request template, a field the SDK adds included, with the
// loop's own (model, messages, tool configuration) filled in.
func TestRequestSetsEveryOption(t *testing.T) {
	c := &Conversation{modelID: "m"}
	owned := map[string]bool{"ModelId": true, "Messages": true, "ToolConfig": true}
	fill(t, reflect.ValueOf(&c.opts.Request), func(name string) bool { return !owned[name] })
	require.NoError(t, checkTemplate(&c.opts.Request))
	in := reflect.ValueOf(c.request([]types.Message{{}}, &types.ToolConfiguration{}, nil, nil, c.model)).Elem()
	for i := range in.NumField() {
		sf := in.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		t.Run(sf.Name, func(t *testing.T) {
			assert.False(t, in.Field(i).IsZero(), "%s is not set", sf.Name)
		})
	}
}

// TestTemplateFieldsTheLoopOwns: a template that sets the model, the
// messages or the tool configuration fails the Send before any call,
// naming the field.
func TestTemplateFieldsTheLoopOwns(t *testing.T) {
	for name, set := range map[string]func(*bedrockruntime.ConverseInput){
		"ModelId":    func(in *bedrockruntime.ConverseInput) { in.ModelId = new(string) },
		"Messages":   func(in *bedrockruntime.ConverseInput) { in.Messages = []types.Message{} },
		"ToolConfig": func(in *bedrockruntime.ConverseInput) { in.ToolConfig = &types.ToolConfiguration{} },
	} {
		t.Run(name, func(t *testing.T) {
			c := New(nil, "m", nil, func(o *Options) { set(&o.Request) })
			_, err := c.Send(t.Context(), "hi")
			require.ErrorContains(t, err, "converse: Options.Request."+name+" is the loop's")
		})
	}
}
