// Package wire encodes and decodes Amazon Bedrock Converse and ConverseStream
// messages exactly as they cross the wire.
//
// Every body goes through the SDK's own codec: the smithy restJson1 protocol
// driven by the bedrockruntime schemas. Nothing here maps Bedrock types to
// JSON by hand, so what this package writes is what the real client reads, and
// what it reads is what the real client writes.
package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/schemas"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithy "github.com/aws/smithy-go"
	smithydocument "github.com/aws/smithy-go/document"
	smithytraits "github.com/aws/smithy-go/traits"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/aws/smithy-go/transport/http/protocol/restjson1"
)

// bodyOp is an operation with no HTTP bindings of its own: serializing a
// shape through it yields just the JSON body.
var bodyOp = smithy.NewSchema(smithy.ShapeID{
	Namespace: "github.com.tooluse.bedrock.wire",
	Name:      "Body",
}, smithy.ShapeTypeOperation, 0, &smithytraits.HTTP{Method: "POST", URI: "/", Code: 200})

// encode writes v as the JSON body of a restJson1 message. The protocol is
// made per call because its event stream codec is not safe for concurrent use.
func encode(shape *smithy.Schema, v smithy.Serializable) ([]byte, error) {
	req := smithyhttp.NewStackRequest().(*smithyhttp.Request)
	op := smithy.NewOperationSchema(bodyOp, shape, nil)
	if err := restjson1.New(nil).SerializeRequest(context.Background(), op, v, req); err != nil {
		return nil, err
	}
	r := req.GetStream()
	if r == nil {
		return []byte("{}"), nil
	}
	return io.ReadAll(r)
}

// decode reads a restJson1 JSON body into out.
func decode(shape *smithy.Schema, body []byte, out smithy.Deserializable) error {
	if !json.Valid(body) {
		return fmt.Errorf("body is not valid JSON")
	}
	resp := &smithyhttp.Response{Response: &http.Response{
		StatusCode:    http.StatusOK,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
	}}
	op := smithy.NewOperationSchema(bodyOp, nil, shape)
	return restjson1.New(nil).DeserializeResponse(context.Background(), op, nil, resp, out)
}

// DecodeConverseInput decodes the body of a Converse request. ConverseStream
// request bodies have the same shape and decode too (the stream-only
// guardrail field streamProcessingMode is dropped). ModelId is not part of
// the body and stays nil.
func DecodeConverseInput(body []byte) (*bedrockruntime.ConverseInput, error) {
	in := &bedrockruntime.ConverseInput{}
	if err := decode(schemas.ConverseRequest, body, (*converseRequest)(in)); err != nil {
		return nil, fmt.Errorf("wire: decode converse request: %w", err)
	}
	return in, nil
}

// EncodeConverseOutput encodes the body of a Converse response.
func EncodeConverseOutput(out *bedrockruntime.ConverseOutput) ([]byte, error) {
	b, err := encode(schemas.ConverseResponse, out)
	if err != nil {
		return nil, fmt.Errorf("wire: encode converse response: %w", err)
	}
	return b, nil
}

// DecodeConverseOutput decodes the body of a Converse response.
func DecodeConverseOutput(body []byte) (*bedrockruntime.ConverseOutput, error) {
	out := &bedrockruntime.ConverseOutput{}
	if err := decode(schemas.ConverseResponse, body, out); err != nil {
		return nil, fmt.Errorf("wire: decode converse response: %w", err)
	}
	return out, nil
}

// EncodeMessages encodes a conversation as the JSON array of a request's
// "messages" field.
func EncodeMessages(msgs []types.Message) ([]byte, error) {
	if msgs == nil {
		msgs = []types.Message{}
	}
	b, err := encode(schemas.ConverseRequest, &bedrockruntime.ConverseInput{Messages: msgs})
	if err != nil {
		return nil, fmt.Errorf("wire: encode messages: %w", err)
	}
	var body struct {
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, fmt.Errorf("wire: encode messages: %w", err)
	}
	if body.Messages == nil {
		return []byte("[]"), nil
	}
	return body.Messages, nil
}

// converseRequest gives ConverseInput the Deserialize method the SDK leaves
// out (a client never reads requests). It follows the generated pattern of
// ConverseOutput.Deserialize.
type converseRequest bedrockruntime.ConverseInput

func (v *converseRequest) Deserialize(d smithy.ShapeDeserializer) error {
	return smithy.ReadStruct(d, schemas.ConverseRequest, func(s *smithy.Schema) error {
		switch s {
		case schemas.ConverseRequest_messages:
			return readList(d, s, &v.Messages, func(m *types.Message) error { return m.Deserialize(d) })
		case schemas.ConverseRequest_system:
			return readList(d, s, &v.System, func(b *types.SystemContentBlock) error {
				return readSystemContentBlock(d, s.ListMember(), b)
			})
		case schemas.ConverseRequest_inferenceConfig:
			v.InferenceConfig = &types.InferenceConfiguration{}
			return v.InferenceConfig.Deserialize(d)
		case schemas.ConverseRequest_toolConfig:
			v.ToolConfig = &types.ToolConfiguration{}
			return v.ToolConfig.Deserialize(d)
		case schemas.ConverseRequest_guardrailConfig:
			v.GuardrailConfig = &types.GuardrailConfiguration{}
			return v.GuardrailConfig.Deserialize(d)
		case schemas.ConverseRequest_additionalModelRequestFields:
			var dv smithydocument.Value
			if err := d.ReadDocument(s, &dv); err != nil {
				return err
			}
			ov, ok := dv.(smithydocument.Opaque)
			if !ok || ov.Value == nil {
				return nil
			}
			// The parser's numbers re-encode as strings inside a lazy
			// document; a pass through encoding/json makes them plain values.
			raw, err := json.Marshal(ov.Value)
			if err != nil {
				return err
			}
			var plain any
			if err := json.Unmarshal(raw, &plain); err != nil {
				return err
			}
			v.AdditionalModelRequestFields = document.NewLazyDocument(plain)
			return nil
		case schemas.ConverseRequest_additionalModelResponseFieldPaths:
			return readList(d, s, &v.AdditionalModelResponseFieldPaths, func(p *string) error {
				return d.ReadString(s.ListMember(), p)
			})
		case schemas.ConverseRequest_performanceConfig:
			v.PerformanceConfig = &types.PerformanceConfiguration{}
			return v.PerformanceConfig.Deserialize(d)
		case schemas.ConverseRequest_serviceTier:
			v.ServiceTier = &types.ServiceTier{}
			return v.ServiceTier.Deserialize(d)
		case schemas.ConverseRequest_outputConfig:
			v.OutputConfig = &types.OutputConfig{}
			return v.OutputConfig.Deserialize(d)
		case schemas.ConverseRequest_projectIdentifier:
			v.ProjectIdentifier = new(string)
			return d.ReadString(s, v.ProjectIdentifier)
		case schemas.ConverseRequest_requestMetadata:
			return readMap(d, s, &v.RequestMetadata, func(p *string) error { return d.ReadString(s.MapValue(), p) })
		case schemas.ConverseRequest_promptVariables:
			return readMap(d, s, &v.PromptVariables, func(p *types.PromptVariableValues) error {
				return smithy.ReadUnion(d, s.MapValue(), func(ms *smithy.Schema) error {
					if ms == schemas.PromptVariableValues_text {
						vv := &types.PromptVariableValuesMemberText{}
						*p = vv
						return vv.Deserialize(d)
					}
					var skip smithydocument.Value
					return d.ReadDocument(ms, &skip)
				})
			})
		}
		// Members this SDK version does not know are consumed as documents
		// so the decoder stays in step.
		var skip smithydocument.Value
		return d.ReadDocument(s, &skip)
	})
}

// readList reads a list shape, appending one element per item; null items
// become zero values, as in the generated deserializers.
func readList[T any](d smithy.ShapeDeserializer, s *smithy.Schema, v *[]T, item func(*T) error) error {
	*v = make([]T, 0)
	return smithy.ReadList(d, s, func() error {
		var elem T
		if isNil, err := d.ReadNil(s.ListMember()); err != nil {
			return err
		} else if !isNil {
			if err := item(&elem); err != nil {
				return err
			}
		}
		*v = append(*v, elem)
		return nil
	})
}

// readMap reads a map shape, as the generated deserializers do; null
// values become zero values.
func readMap[T any](d smithy.ShapeDeserializer, s *smithy.Schema, v *map[string]T, item func(*T) error) error {
	*v = make(map[string]T)
	return smithy.ReadMap(d, s, func(k string) error {
		var elem T
		if isNil, err := d.ReadNil(s.MapValue()); err != nil {
			return err
		} else if !isNil {
			if err := item(&elem); err != nil {
				return err
			}
		}
		(*v)[k] = elem
		return nil
	})
}

// readSystemContentBlock mirrors the SDK's unexported
// deserializeSystemContentBlock.
func readSystemContentBlock(d smithy.ShapeDeserializer, s *smithy.Schema, v *types.SystemContentBlock) error {
	return smithy.ReadUnion(d, s, func(ms *smithy.Schema) error {
		switch ms {
		case schemas.SystemContentBlock_cachePoint:
			vv := &types.SystemContentBlockMemberCachePoint{}
			*v = vv
			return vv.Deserialize(d)
		case schemas.SystemContentBlock_guardContent:
			vv := &types.SystemContentBlockMemberGuardContent{}
			*v = vv
			return vv.Deserialize(d)
		case schemas.SystemContentBlock_text:
			vv := &types.SystemContentBlockMemberText{}
			*v = vv
			return vv.Deserialize(d)
		}
		var skip smithydocument.Value
		return d.ReadDocument(ms, &skip)
	})
}

// EncodeConverseInput encodes the body of a Converse request as the SDK
// sends it (without the model ID, which travels in the URL path).
func EncodeConverseInput(in *bedrockruntime.ConverseInput) ([]byte, error) {
	cp := *in
	cp.ModelId = nil
	b, err := encode(schemas.ConverseRequest, &cp)
	if err != nil {
		return nil, fmt.Errorf("wire: encode converse request: %w", err)
	}
	return b, nil
}

// DecodeMessages decodes a JSON array in the form of a request's "messages"
// field.
func DecodeMessages(b []byte) ([]types.Message, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '[' || !json.Valid(b) {
		return nil, fmt.Errorf("wire: decode messages: not a JSON array")
	}
	body := make([]byte, 0, len(b)+14)
	body = append(body, `{"messages":`...)
	body = append(body, b...)
	body = append(body, '}')
	in := &bedrockruntime.ConverseInput{}
	if err := decode(schemas.ConverseRequest, body, (*converseRequest)(in)); err != nil {
		return nil, fmt.Errorf("wire: decode messages: %w", err)
	}
	if in.Messages == nil {
		in.Messages = []types.Message{}
	}
	encodeDocuments(in.Messages)
	return in.Messages, nil
}

// encodeDocuments makes the documents of msgs, the calls' inputs and the
// tools' JSON results, Encoded ones, as a live history holds them.
func encodeDocuments(msgs []types.Message) {
	for _, m := range msgs {
		for _, b := range m.Content {
			switch v := b.(type) {
			case *types.ContentBlockMemberToolUse:
				v.Value.Input = Encoded(v.Value.Input)
			case *types.ContentBlockMemberToolResult:
				for _, c := range v.Value.Content {
					if j, ok := c.(*types.ToolResultContentBlockMemberJson); ok {
						j.Value = Encoded(j.Value)
					}
				}
			}
		}
	}
}
