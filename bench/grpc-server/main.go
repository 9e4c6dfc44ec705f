// Command grpc-server is bench/grpc's server: grpc-go serving helloworld.Greeter
// (greeter.proto beside it) on 127.0.0.1:PORT, SayHello answering "hello NAME" and
// SayHellos answering with REPLIES such replies, then status 0. The messages are read and
// written by hand (field 1, a string) through a codec of raw bytes in place of the
// protobuf one, so the server needs no generated code. A call compressed with gzip is
// answered compressed. On SIGUSR1 it prints the calls and
// replies it has answered, for the bench to check each tool's counts against.
// scenarios/grpc-servers serves SayHello with it too, as the compiled reference beside
// the Python servers; `--version` prints the grpc-go and Go it was built with.
//
//	grpc-server PORT REPLIES
//	grpc-server --version
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	// gzip for calls that ask for it (grpc-encoding: gzip): their replies go compressed.
	_ "google.golang.org/grpc/encoding/gzip"
)

// raw passes a message's bytes through as they are; it takes the name of the protobuf
// codec, so every call of this server uses it.
type raw struct{}

func (raw) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }

func (raw) Unmarshal(data []byte, v any) error {
	p := v.(*[]byte)
	*p = append((*p)[:0], data...)
	return nil
}

func (raw) Name() string { return "proto" }

var calls, replies atomic.Int64
var perStream int

// name is field 1 of a HelloRequest; other fields are skipped.
func name(msg []byte) []byte {
	var found []byte
	for len(msg) > 0 {
		key, n := varint(msg)
		if n == 0 {
			return found
		}
		msg = msg[n:]
		switch key & 7 {
		case 0:
			_, n = varint(msg)
			if n == 0 {
				return found
			}
			msg = msg[n:]
		case 2:
			l, n := varint(msg)
			if n == 0 || uint64(len(msg)-n) < l {
				return found
			}
			if key == 0x0a {
				found = msg[n : n+int(l)]
			}
			msg = msg[n+int(l):]
		case 1:
			if len(msg) < 8 {
				return found
			}
			msg = msg[8:]
		case 5:
			if len(msg) < 4 {
				return found
			}
			msg = msg[4:]
		default:
			return found
		}
	}
	return found
}

func varint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// reply is a HelloReply of "hello NAME".
func reply(n []byte) []byte {
	text := append([]byte("hello "), n...)
	out := []byte{0x0a}
	l := len(text)
	for l >= 0x80 {
		out = append(out, byte(l)|0x80)
		l >>= 7
	}
	out = append(out, byte(l))
	return append(out, text...)
}

func sayHello(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	var req []byte
	if err := dec(&req); err != nil {
		return nil, err
	}
	out := reply(name(req))
	calls.Add(1)
	replies.Add(1)
	return &out, nil
}

func sayHellos(_ any, stream grpc.ServerStream) error {
	var req []byte
	if err := stream.RecvMsg(&req); err != nil {
		return err
	}
	out := reply(name(req))
	for i := 0; i < perStream; i++ {
		if err := stream.SendMsg(&out); err != nil {
			return err
		}
		replies.Add(1)
	}
	calls.Add(1)
	return nil
}

var greeter = grpc.ServiceDesc{
	ServiceName: "helloworld.Greeter",
	HandlerType: (*any)(nil),
	Methods:     []grpc.MethodDesc{{MethodName: "SayHello", Handler: sayHello}},
	Streams: []grpc.StreamDesc{
		{StreamName: "SayHellos", Handler: sayHellos, ServerStreams: true},
	},
	Metadata: "greeter.proto",
}

// version is "grpc-go vX.Y.Z (goA.B.C)": the grpc-go module this binary was built with.
func version() string {
	v := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "google.golang.org/grpc" {
				v = d.Version
			}
		}
	}
	return fmt.Sprintf("grpc-go %s (%s)", v, runtime.Version())
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Println(version())
		return
	}
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: grpc-server PORT REPLIES (or --version)")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n < 1 {
		fmt.Fprintln(os.Stderr, "REPLIES: a number of replies, 1 or more")
		os.Exit(2)
	}
	perStream = n
	encoding.RegisterCodec(raw{})
	l, err := net.Listen("tcp", "127.0.0.1:"+os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s := grpc.NewServer()
	s.RegisterService(&greeter, struct{}{})
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		for range usr1 {
			fmt.Printf("%d %d\n", calls.Load(), replies.Load())
		}
	}()
	fmt.Printf("listening on %s\n", l.Addr())
	if err := s.Serve(l); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
