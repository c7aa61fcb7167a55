# frozen_string_literal: true

require "bundler"
require "net/http"
require "rbconfig"
require "socket"
require_relative "free_port"
require "timeout"

module LeaseMachines
  # A config.ru served by `rackup -s webrick` on 127.0.0.1, in a process of
  # its own started outside the bundle (WEBrick and rackup are the host's
  # packages, not the gem's dependencies), with lib/ on its load path: what
  # a browser talks to.
  class RackupServer
    ROOT = File.expand_path("../..", __dir__)
    RACKUP = ENV.fetch("RACKUP", "/usr/bin/rackup")

    attr_reader :port

    def self.available?
      File.executable?(RACKUP)
    end

    # @param env [Hash{String => String}] the config.ru's settings
    def initialize(config_ru, env)
      @port = FreePort.pick
      @log = "#{env.fetch('LM_LOG')}.server"
      env = env.merge("RUBYLIB" => File.join(ROOT, "lib"))
      @pid = Bundler.with_unbundled_env do
        Process.spawn(env, RbConfig.ruby, RACKUP, "-s", "webrick", "-o", "127.0.0.1", "-p", @port.to_s, "-E", "none",
                      config_ru, out: @log, err: @log)
      end
      Timeout.timeout(20, RuntimeError, "rackup did not listen on #{@port}: #{File.read(@log)}") do
        sleep 0.05 until listening?
      end
    end

    def url(path = "/")
      "http://127.0.0.1:#{@port}#{path}"
    end

    def stop
      Process.kill("TERM", @pid)
      Process.wait(@pid)
    end

    private

    def listening?
      raise "rackup exited: #{File.read(@log)}" if Process.wait(@pid, Process::WNOHANG)

      TCPSocket.new("127.0.0.1", @port).close
      true
    rescue SystemCallError
      false
    end
  end
end
