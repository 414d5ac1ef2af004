// Package onnxpb holds the Go types of the ONNX protobuf schema (onnx.proto,
// proto2, package onnx) as shipped by Debian's libonnx-dev for onnx 1.12, the
// version whose checker the zoo's tests run. The zoo builds models as these
// messages and serializes them with google.golang.org/protobuf, so no ONNX
// bytes are ever encoded by hand.
//
// onnx.pb.go is generated and committed; regenerate it with
//
//	go generate ./stages/zoo/onnxpb
//
// which needs protoc (Debian: protobuf-compiler, 3.21.12) and protoc-gen-go
// v1.36.10, the protobuf runtime version go.mod requires, either on PATH or
// in the repository's .tools/bin:
//
//	apt-get install -y libonnx-dev protobuf-compiler
//	GOBIN=$PWD/.tools/bin go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.10
//
// onnx.proto declares no go_package, so the M option maps it to this
// package. Other protoc or protoc-gen-go versions change only the version
// comment at the top of the file; another onnx.proto changes the schema, and
// the zoo relies on the IR 8 fields of onnx 1.12.
package onnxpb

//go:generate sh -c "PATH=../../../.tools/bin:$PATH protoc -I/usr/include/onnx --go_out=. --go_opt=paths=source_relative --go_opt=Monnx.proto=github.com/mlsched/mlsched/stages/zoo/onnxpb onnx.proto"
