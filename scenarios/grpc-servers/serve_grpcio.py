"""grpcio's thread-pool server: helloworld.Greeter/SayHello on 127.0.0.1:PORT, WORKERS
threads (python serve_grpcio.py PORT WORKERS). Its messages come from helloworld.proto at
start (grpc.protos_and_services, grpcio-tools' runtime import): no generated files."""
import sys
from concurrent import futures

import grpc

protos, services = grpc.protos_and_services("helloworld.proto")


class Greeter(services.GreeterServicer):
    def SayHello(self, request, context):
        return protos.HelloReply(message="hello " + request.name)


def main():
    port, workers = int(sys.argv[1]), int(sys.argv[2])
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers))
    services.add_GreeterServicer_to_server(Greeter(), server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    server.wait_for_termination()


if __name__ == "__main__":
    main()
