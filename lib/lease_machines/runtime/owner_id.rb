# frozen_string_literal: true

require "socket"

# LeaseMachines.owner_id (see docs/RUNTIME.md).
module LeaseMachines
  NO_NAME = Object.new.freeze
  private_constant :NO_NAME

  def self.owner_id(name = NO_NAME)
    name = "#{Socket.gethostname}/#{Process.pid}/#{Thread.current.object_id}" if NO_NAME.equal?(name)
    Native.owner_id_of(name)
  end
end
