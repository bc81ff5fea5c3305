"""Who could the spies be? Exact enumeration over a game's public record, and a fitted behaviour model."""
