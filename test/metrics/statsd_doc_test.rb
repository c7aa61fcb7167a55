# frozen_string_literal: true

require "test_helper"
require "open3"
require "socket"
require "timeout"
require_relative "../docs/doc_examples"

module LeaseMachines
  # docs/RUNTIME.md's StatsD subscriber, run as written in a Ruby of its own
  # (it loads ActiveSupport::Notifications, which this suite's process must
  # not), against a real UDP socket standing in for StatsD.
  class StatsdDocTest < Minitest::Test
    BLOCK = DocExamples.blocks("docs/RUNTIME.md").find { |block| block.heading.to_s.include?("StatsD") }

    def test_the_documented_subscriber_sends_the_events_to_statsd
      refute_nil BLOCK, "docs/RUNTIME.md has a StatsD example"
      server = UDPSocket.new
      server.bind("127.0.0.1", 0)
      script = [BLOCK.code.join("\n"), 'require "lease_machines/testing"',
                'LeaseMachines::Stores::Memory.new.authority("reports/nightly").hold(owner: 1, ttl: 30) { :ok }'].join("\n")
      env = { "STATSD_HOST" => "127.0.0.1", "STATSD_PORT" => server.addr[1].to_s }
      _, error, status = Open3.capture3(env, RbConfig.ruby, "-I", File.expand_path("../../lib", __dir__), "-e", script)
      assert_predicate status, :success?, error

      lines = datagrams(server)
      assert_includes lines, "lease_machines.acquire:1|c|#family:reports,status:granted"
      assert_includes lines, "lease_machines.release:1|c|#family:reports,status:released"
      assert_includes lines, "lease_machines.acquire_wait:0.0|ms|#family:reports,status:granted"
      assert(lines.any? { |line| line.match?(/\Alease_machines\.store_call:\d+(\.\d+)?\|ms\|#family:reports,status:granted\z/) })
      assert(lines.any? { |line| line.match?(/\Alease_machines\.held:\d+(\.\d+)?\|ms\|#family:reports,status:released\z/) })
    ensure
      server&.close
    end

    # Every datagram sent by the finished process (they wait in the socket's buffer).
    def datagrams(server)
      lines = []
      loop { lines << server.recv_nonblock(65_536) }
    rescue IO::WaitReadable
      lines
    end
  end
end
