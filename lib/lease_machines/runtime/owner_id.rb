# frozen_string_literal: true

require "socket"

# LeaseMachines.owner_id (see docs/RUNTIME.md).
module LeaseMachines
  NO_NAME = Object.new.freeze
  private_constant :NO_NAME

  # The owner id of a name: FNV-1a (64-bit) of its UTF-8 bytes, the same in
  # every process (unlike `String#hash`). With no argument, the id of
  # `"#{host}/#{pid}/#{thread}"`.
  # @return [Integer] in 0..2**64-1
  def self.owner_id(name = NO_NAME)
    name = "#{Socket.gethostname}/#{Process.pid}/#{Thread.current.object_id}" if NO_NAME.equal?(name)
    Native.owner_id_of(name)
  end
end
