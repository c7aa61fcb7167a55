# frozen_string_literal: true

require "fileutils"
require "open3"

module LeaseMachines
  # What a failover test does to servers of its own, through script/postgres
  # or script/mysql: run a command of the script, see whether a server's
  # process is gone after a SIGKILL, and remove the servers at the end.
  module ServerScripts
    # @return [String] what the script printed (a server's URL for `start`)
    def server_script(script, environment, command)
      out, err, status = Open3.capture3(environment, script, command)
      assert_predicate status, :success?, "#{File.basename(script)} #{command} failed: #{err}"
      out.strip
    end

    # Stops each server and deletes its folder (`environment[dir_key]`).
    def remove_servers(script, environments, dir_key)
      environments.each do |environment|
        Open3.capture3(environment, script, "stop")
        dir = environment.fetch(dir_key)
        FileUtils.rm_rf([dir, "#{dir}.initdb.log"])
      end
    end

    def alive?(pid)
      Process.kill(0, pid)
      true
    rescue Errno::ESRCH
      false
    end
  end
end
