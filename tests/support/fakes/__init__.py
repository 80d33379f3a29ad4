"""Stand-ins for network peers (the Hub, OpenAI-compatible servers), served on 127.0.0.1."""
