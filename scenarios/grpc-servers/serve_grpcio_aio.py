"""grpcio's asyncio server (grpc.aio): helloworld.Greeter/SayHello on 127.0.0.1:PORT, one
event loop (python serve_grpcio_aio.py PORT)."""
import asyncio
import sys

import grpc

protos, services = grpc.protos_and_services("helloworld.proto")


class Greeter(services.GreeterServicer):
    async def SayHello(self, request, context):
        return protos.HelloReply(message="hello " + request.name)


async def main():
    server = grpc.aio.server()
    services.add_GreeterServicer_to_server(Greeter(), server)
    server.add_insecure_port(f"127.0.0.1:{int(sys.argv[1])}")
    await server.start()
    await server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(main())
