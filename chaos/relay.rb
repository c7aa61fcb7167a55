# frozen_string_literal: true

# A TCP to Unix-socket relay, run inside the relay's network namespace by
# Chaos::Network: `ruby chaos/relay.rb ADDRESS PORT SOCKET`. Each accepted
# connection is forwarded, both ways, to the database's Unix socket (which
# is not bound to any network namespace). It decides nothing and keeps
# nothing: when either side closes, so does the other.
require "socket"

address, port, socket_path = ARGV
server = TCPServer.new(address, Integer(port, 10))

pump = lambda do |from, to|
  loop { to.write(from.readpartial(65_536)) }
rescue IOError, SystemCallError
  [from, to].each do |io|
    io.close
  rescue IOError
    nil
  end
end

loop do
  client = server.accept
  Thread.new(client) do |tcp|
    unix = UNIXSocket.new(socket_path)
    Thread.new { pump.call(tcp, unix) }
    pump.call(unix, tcp)
  rescue SystemCallError
    tcp.close
  end
end
