


	raw-scope*
ÿ