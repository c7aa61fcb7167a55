# frozen_string_literal: true

require "socket"

# LeaseMachines.owner_id (see docs/RUNTIME.md).
module LeaseMachines
  NO_NAME = Object.new.freeze
  private_constant :NO_NAME

  # The owner id of a name: FNV-1a (64-bit) of the name's UTF-8 bytes,
  # computed by the core (`OwnerId::of_name`), so the same name gives the same
  # Integer in every process, host and Ruby version (unlike `String#hash`,
  # which is seeded per process).
  #
  # `name` must be a non-empty String that is valid in its encoding and
  # converts to UTF-8; a String in another encoding is transcoded first, so
  # the same text gives the same id whatever its encoding. Anything else
  # raises TypeError (not a String) or ArgumentError (empty, or not text).
  #
  # With no argument: the id of `"#{host}/#{pid}/#{thread}"`, where host is
  # `Socket.gethostname`, pid is `Process.pid` and thread is
  # `Thread.current.object_id`: one for this host, process and thread, and a
  # different one in a forked child (its pid differs).
  # @return [Integer] in 0..2**64-1
  def self.owner_id(name = NO_NAME)
    name = "#{Socket.gethostname}/#{Process.pid}/#{Thread.current.object_id}" if NO_NAME.equal?(name)
    Native.owner_id_of(name)
  end
end
