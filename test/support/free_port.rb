# frozen_string_literal: true

require "socket"

module LeaseMachines
  # A TCP port on loopback that nothing listens on now (the kernel's pick),
  # for a server a test starts.
  module FreePort
    def self.pick
      server = TCPServer.new("127.0.0.1", 0)
      server.addr[1]
    ensure
      server&.close
    end
  end
end
