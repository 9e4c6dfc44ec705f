"""grpclib (pure-Python HTTP/2 by h2, on asyncio): helloworld.Greeter/SayHello on
127.0.0.1:PORT (python serve_grpclib.py PORT). The messages are grpcio-tools' runtime
import of helloworld.proto (grpc.protos); the method is mapped by hand, as grpclib's
generated base class would map it."""
import asyncio
import sys

import grpc
import grpclib.const
import grpclib.server

protos = grpc.protos("helloworld.proto")


class Greeter:
    async def SayHello(self, stream):
        request = await stream.recv_message()
        await stream.send_message(protos.HelloReply(message="hello " + request.name))

    def __mapping__(self):
        return {
            "/helloworld.Greeter/SayHello": grpclib.const.Handler(
                self.SayHello,
                grpclib.const.Cardinality.UNARY_UNARY,
                protos.HelloRequest,
                protos.HelloReply,
            )
        }


async def main():
    server = grpclib.server.Server([Greeter()])
    await server.start("127.0.0.1", int(sys.argv[1]))
    await server.wait_closed()


if __name__ == "__main__":
    asyncio.run(main())
